// The credential request (OpenID4VCI 1.0 section 8.2), parsed into what the endpoint acts on. Each
// malformed part fails with the error code OpenID4VCI gives it: invalid_proof for the proofs,
// unknown_credential_identifier for identifiers this issuer never handed out, invalid_credential_request else.
import { z } from 'zod';
import { invalidCredentialRequest, invalidProof, unknownCredentialIdentifier } from '../errors.js';

const Request = z.object({
  credential_configuration_id: z.string().min(1).optional(),
  credential_identifier: z.unknown().optional(),
  proofs: z.record(z.string(), z.unknown()).optional(),
  proof: z.record(z.string(), z.unknown()).optional(),
  credential_response_encryption: z.unknown().optional(),
});
/** `proofs`: exactly one proof type: jwt, as a list of strings, or attestation, a list of exactly one. */
const JwtProofs = z.strictObject({ jwt: z.array(z.string()) });
const AttestationProofs = z.strictObject({ attestation: z.tuple([z.string()]) });
/** `proof` (the single-proof form of earlier drafts, still sent by some wallets): the same checks. */
const SingleJwtProof = z.object({ proof_type: z.literal('jwt'), jwt: z.string() });

/** The key proofs of a request: jwt proofs (a batch), or one key attestation (the attestation proof type). */
export type KeyProofs = { type: 'jwt'; jwts: string[] } | { type: 'attestation'; jwt: string };

export interface CredentialRequest {
  /** Named by credential_configuration_id, or by credential_identifier (ours are the configuration ids). */
  configurationId: string;
  byIdentifier: boolean;
  /** Absent when the request carries none. */
  proofs?: KeyProofs;
}

export function parseCredentialRequest(body: Record<string, unknown>, batchSize: number): CredentialRequest {
  const parsed = Request.safeParse(body);
  if (!parsed.success) throw invalidCredentialRequest(describe(parsed.error));
  // credential_response_encryption was read, and checked, when the request was opened (encryption.ts).
  const request = parsed.data;
  const identifier = request.credential_identifier;
  if (identifier !== undefined && typeof identifier !== 'string')
    throw unknownCredentialIdentifier('credential_identifier must be a string');
  if (identifier !== undefined && request.credential_configuration_id !== undefined)
    throw invalidCredentialRequest('send credential_identifier or credential_configuration_id, not both');
  const configurationId = identifier ?? request.credential_configuration_id;
  if (!configurationId) throw invalidCredentialRequest('credential_configuration_id is required');
  if (request.proofs && request.proof) throw invalidCredentialRequest('send proofs or proof, not both');
  const proofs = keyProofsOf(request);
  if (proofs?.type === 'jwt' && proofs.jwts.length > batchSize) throw invalidCredentialRequest(`at most ${batchSize} proofs per request`);
  return { configurationId, byIdentifier: identifier !== undefined, ...(proofs && { proofs }) };
}

function keyProofsOf(request: z.infer<typeof Request>): KeyProofs | undefined {
  if (request.proofs) {
    if (request.proofs.attestation !== undefined) {
      const proofs = AttestationProofs.safeParse(request.proofs);
      if (!proofs.success)
        throw invalidProof('proofs.attestation must be an array of exactly one key attestation JWT, and the only proof type');
      return { type: 'attestation', jwt: proofs.data.attestation[0] };
    }
    const proofs = JwtProofs.safeParse(request.proofs);
    if (!proofs.success) {
      if (Object.keys(request.proofs).length !== 1 || !Array.isArray(request.proofs.jwt))
        throw invalidProof('proofs must hold exactly one proof type, jwt or attestation, as an array');
      throw invalidProof('every jwt proof must be a string');
    }
    return { type: 'jwt', jwts: proofs.data.jwt };
  }
  if (request.proof) {
    const proof = SingleJwtProof.safeParse(request.proof);
    if (!proof.success)
      throw invalidProof(request.proof.proof_type !== 'jwt' ? 'proof_type must be jwt' : 'every jwt proof must be a string');
    return { type: 'jwt', jwts: [proof.data.jwt] };
  }
  return undefined;
}

function describe(error: z.ZodError): string {
  const issue = error.issues[0];
  return `${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'malformed'}`;
}
