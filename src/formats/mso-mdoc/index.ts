// ISO 18013-5 mdoc (`mso_mdoc`). Its issuing and verifying code loads on first use.
import { lazy } from '../../platform/lazy.js';
import type { CredentialFormat } from '../types.js';

const issuing = lazy(() => import('./issue.js'));
const verifying = lazy(() => import('./verify.js'));

export const msoMdoc: CredentialFormat = {
  id: 'mso_mdoc',
  async issue({ config, claims, holderJwk, status }, signer) {
    const { issueMdoc } = await issuing();
    const docType = config.config.docType as string;
    return issueMdoc({ docType, fields: config.fields, claims, holderJwk, lifetimeSeconds: config.lifeTime, status }, signer);
  },
  // A DeviceResponse may hold several documents.
  verify: async (presentation, context) => (await verifying()).verifyMdocPresentation(presentation, context),
};
