// What a wallet does with a request object whose client_id has the prefix openid_federation
// (OpenID4VP 1.0 section 5.9.3): it checks the trust_chain of the JWS header (OpenID Federation 1.0
// sections 4.3 and 10.2) against the trust anchor it trusts, applies the chain's metadata policies
// to the verifier's metadata, and verifies the request object with the jwks of the resolved
// openid_credential_verifier metadata. Signatures are checked with jose, statements parsed and
// policies applied with @openid-federation/core: neither is svc's own code.
import {
  applyMetadataPolicyToMetadata,
  combineMetadataPolicies,
  entityConfigurationClaimsSchema,
  entityStatementClaimsSchema,
} from '@openid-federation/core';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, type JWK, type JWTPayload, jwtVerify } from 'jose';

export interface TrustedAnchor {
  entityId: string;
  /** The anchor's keys as the wallet holds them (not as the chain says). */
  jwks: { keys: JWK[] };
}

type Statement = JWTPayload & { jwks?: { keys: JWK[] }; metadata?: Record<string, any>; metadata_policy?: unknown };

const ENTITY_STATEMENT = { typ: 'entity-statement+jwt' };

async function verifiedBy(jwt: string, jwks: { keys: JWK[] } | undefined, what: string): Promise<Statement> {
  if (!jwks?.keys.length) throw new Error(`${what}: no keys to verify it with`);
  try {
    return (await jwtVerify(jwt, createLocalJWKSet(jwks), ENTITY_STATEMENT)).payload as Statement;
  } catch (err) {
    throw new Error(`${what}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * Checks `chain` (the subject's entity configuration, the subordinate statements upward, the anchor's
 * entity configuration) from `entityId` to `anchor`: each statement names the next one's subject as
 * its issuer and is signed by a key of the next one; the last is signed by the anchor's key the wallet
 * holds; none has expired. Answers the subject's metadata with the superiors' policies applied.
 */
export async function verifyTrustChain(chain: string[], entityId: string, anchor: TrustedAnchor) {
  if (chain.length < 2) throw new Error('trust_chain: at least the entity configuration and one subordinate statement');
  const statements = chain.map((jwt) => decodeJwt(jwt) as Statement);
  const [leaf] = statements;
  if (leaf?.iss !== entityId || leaf.sub !== entityId)
    throw new Error(`trust_chain: the first statement is not the configuration of ${entityId}`);
  entityConfigurationClaimsSchema.parse(leaf);
  await verifiedBy(chain[0] as string, leaf.jwks, 'entity configuration (its own keys)');
  for (let i = 0; i < chain.length - 1; i++) {
    const superior = statements[i + 1] as Statement;
    if (statements[i]?.iss !== superior.sub)
      throw new Error(`trust_chain: statement ${i} is issued by ${statements[i]?.iss}, the next one is about ${superior.sub}`);
    if (i > 0) entityStatementClaimsSchema.parse(statements[i]);
    await verifiedBy(chain[i] as string, superior.jwks, `statement ${i} (the keys of ${superior.sub})`);
  }
  const last = statements.at(-1) as Statement;
  if (last.sub !== anchor.entityId) throw new Error(`trust_chain: it ends at ${last.sub}, not at the trust anchor ${anchor.entityId}`);
  await verifiedBy(chain.at(-1) as string, anchor.jwks, 'trust anchor (the keys the wallet holds)');
  // The subordinate statements' policies, the anchor's first; the anchor's own configuration carries none.
  const subordinates = statements.slice(1, statements.at(-1)?.iss === statements.at(-1)?.sub ? -1 : undefined);
  const { mergedPolicy } = combineMetadataPolicies({ statements: subordinates as never });
  const { resolvedLeafMetadata } = applyMetadataPolicyToMetadata({
    leafMetadata: leaf.metadata as never,
    policyMetadata: mergedPolicy as never,
  });
  // A plain copy: the library answers a frozen structure, which jose cannot clone keys from.
  return JSON.parse(JSON.stringify(resolvedLeafMetadata)) as Record<string, any>;
}

/** The wallet's check of a request object with prefix openid_federation; answers its payload and the verifier's resolved metadata. */
export async function verifyFederatedRequest(requestObject: string, anchor: TrustedAnchor) {
  const header = decodeProtectedHeader(requestObject) as { trust_chain?: unknown };
  const chain = header.trust_chain;
  if (!Array.isArray(chain) || !chain.every((jwt) => typeof jwt === 'string')) throw new Error('no trust_chain in the JWS header');
  const clientId = String(decodeJwt(requestObject).client_id ?? '');
  const prefix = 'openid_federation:';
  if (!clientId.startsWith(prefix)) throw new Error(`client_id ${clientId} has not the prefix ${prefix}`);
  const metadata = await verifyTrustChain(chain, clientId.slice(prefix.length), anchor);
  const verifier = metadata.openid_credential_verifier;
  if (!verifier?.jwks) throw new Error('the resolved metadata has no openid_credential_verifier jwks');
  const { payload } = await jwtVerify(requestObject, createLocalJWKSet(verifier.jwks), { typ: 'oauth-authz-req+jwt' }).catch((err) => {
    throw new Error(`request object: ${err instanceof Error ? err.message : String(err)}`);
  });
  return { payload: payload as Record<string, any>, verifierMetadata: verifier as Record<string, any> };
}
