// SD-JWT VC (`dc+sd-jwt`), IETF SD-JWT-based Verifiable Credentials.
import { lazy } from '../../platform/lazy.js';
import type { CredentialFormat } from '../types.js';
import { verifySdJwtPresentation } from './verify.js';

const issuing = lazy(() => import('./issue.js'));

export const sdJwtVc: CredentialFormat = {
  id: 'dc+sd-jwt',
  async issue({ config, claims, holderJwk, status, issuer, federationEntityId, vct }, signer) {
    const { issueSdJwtVc } = await issuing();
    const trustFormat = config.sdJwtTrustFormat ?? 'x5c';
    const iss = trustFormat === 'federation' ? (federationEntityId ?? issuer) : issuer;
    const lifetimeSeconds = config.lifeTime;
    return issueSdJwtVc({ issuer: iss, vct, claims, fields: config.fields, holderJwk, lifetimeSeconds, trustFormat, status }, signer);
  },
  verify: async (presentation, context) => [await verifySdJwtPresentation(presentation, context)],
};
