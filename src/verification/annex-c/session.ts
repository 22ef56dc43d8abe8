// What an Annex C presentation session keeps beyond the others: in its sealed private data the
// EncryptionInfo as sent (it is part of the session transcript) and the recipient's private key.
import { z } from 'zod';
import type { SessionState } from '../../sessions/model.js';

/** The dcApiProtocol of an Annex C session (management API: oid4vp or iso-18013-7). */
export const ISO_18013_7 = 'iso-18013-7';
/** The W3C Digital Credentials API protocol identifier of ISO/IEC 18013-7 Annex C. */
export const ANNEX_C_PROTOCOL = 'org-iso-mdoc' as const;

export const AnnexCSecretsSchema = z.object({
  /** base64url(CBOR(EncryptionInfo)), exactly as the request carried it. */
  encryptionInfo: z.string(),
  /** The recipient's private P-256 key (JWK). */
  recipientKey: z.record(z.string(), z.unknown()),
});
export type AnnexCSecrets = z.output<typeof AnnexCSecretsSchema>;

/** The Annex C secrets of a session; undefined when it has none (another flow, or anonymized). */
export function annexCSecrets(session: SessionState): AnnexCSecrets | undefined {
  const value = (session.private as { annexC?: unknown } | null)?.annexC;
  return value === undefined ? undefined : AnnexCSecretsSchema.parse(value);
}

export const annexCResponseUrl = (publicUrl: string, walletNonce: string) => `${publicUrl}/presentations/${walletNonce}/annex-c-response`;
