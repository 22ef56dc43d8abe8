// The OpenID Federation trust framework: an issuer, a status list signer or an authorization server
// is trusted through its trust chain to one of the tenant's trust anchors (or those a query names),
// and its keys are those of the metadata the chain resolves to.
import type { JSONWebKeySet } from 'jose';
import { certificateKey } from '../../platform/crypto/certificate-chains.js';
import { ecPublicKey, ecThumbprint } from '../../platform/crypto/ec-jws.js';
import { isJsonObject } from '../../platform/json.js';
import { type TrustFramework, TrustRefused } from '../framework.js';
import { FederationRefused } from './entity-statement.js';

const refusedBy = (reason: string) => new TrustRefused(`untrusted issuer: OpenID Federation: ${reason}`);

export const federationFramework: TrustFramework = {
  id: 'federation',
  label: 'OpenID Federation',
  authorityTypes: ['openid_federation'],
  async matchAuthority(_sources, _type, values, { anchor }) {
    return { value: values.find((value) => value === anchor), unread: [] };
  },
  async issuerKey({ federation }, { header, iss, anchorIds }) {
    if (!federation) throw refusedBy('the tenant takes part in no federation');
    try {
      if (typeof iss !== 'string') throw new FederationRefused('credential', 'iss is missing');
      if (typeof header.kid !== 'string') throw new FederationRefused('credential', 'the header names no kid');
      const { jwk, trust } = await federation.issuerKey(iss, header.kid, anchorIds);
      const key = typeof header.alg === 'string' ? ecPublicKey(jwk as Record<string, unknown>, header.alg) : undefined;
      if (!key) throw new FederationRefused('credential key', `key ${header.kid} does not fit alg ${String(header.alg)}`);
      return { framework: 'federation', anchor: trust.anchor, value: key };
    } catch (err) {
      if (err instanceof FederationRefused) throw refusedBy(err.message);
      throw err;
    }
  },

  /** Only for a credential accepted through a chain: the signer's key must be one of the issuer's resolved metadata (the same, cached, chain). */
  async statusListSigner({ federation }, { x5c, credential }) {
    const authority = credential?.authority;
    if (!credential || !authority || !federation) return undefined;
    let keys: unknown[] = [];
    try {
      const issuerMetadata = (await federation.resolve(credential.issuer, authority.values)).metadata.openid_credential_issuer;
      const jwks = isJsonObject(issuerMetadata) ? issuerMetadata.jwks : undefined;
      keys = isJsonObject(jwks) && Array.isArray(jwks.keys) ? jwks.keys : [];
    } catch (err) {
      if (err instanceof FederationRefused) return undefined;
      throw err;
    }
    const signer = ecThumbprint(certificateKey(x5c[0] as string).export({ format: 'jwk' }) as Record<string, unknown>);
    const vouched = keys.some((key) => isJsonObject(key) && key.kty === 'EC' && ecThumbprint(key) === signer);
    return vouched ? { framework: 'federation', anchor: authority.values[0], value: true } : undefined;
  },

  async authorizationServerKeys({ federation }, server) {
    if (!federation) throw new FederationRefused('authorization server', 'the tenant takes part in no federation');
    const trust = await federation.resolve(server);
    const metadata = trust.metadata.oauth_authorization_server;
    if (!isJsonObject(metadata) || metadata.issuer !== server)
      throw new FederationRefused(
        'authorization server metadata',
        `the resolved metadata has no oauth_authorization_server with issuer ${server}`,
      );
    if (isJsonObject(metadata.jwks))
      return { framework: 'federation', anchor: trust.anchor, value: { jwks: metadata.jwks as unknown as JSONWebKeySet } };
    if (typeof metadata.jwks_uri === 'string')
      return { framework: 'federation', anchor: trust.anchor, value: { jwksUri: metadata.jwks_uri } };
    throw new FederationRefused('authorization server metadata', 'the resolved metadata names neither jwks nor jwks_uri');
  },
};
