// Standard Webhooks (standardwebhooks.com): every request carries webhook-id (one per event, the
// same on every attempt), webhook-timestamp (seconds, of this attempt) and webhook-signature, the
// base64 HMAC-SHA256 of "{id}.{timestamp}.{body}" keyed with the bytes of the secret's base64 part,
// as "v1,<signature>"; while a rotated-out secret is still in its grace period, one such value per
// secret, separated by spaces, so that a receiver that knows either accepts the request.
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

/** A new secret: whsec_ and the base64 of 32 random bytes. */
export const newSigningSecret = () => `${PREFIX}${randomBytes(32).toString('base64')}`;

const keyOf = (secret: string) => Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');

export function signatureOf(secret: string, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** The three headers of one attempt; without secrets (an endpoint made before signing existed) no signature. */
export function webhookHeaders(id: string, timestampSeconds: number, body: string, secrets: readonly string[]): Record<string, string> {
  const signatures = secrets.map((secret) => signatureOf(secret, id, timestampSeconds, body));
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    ...(signatures.length && { 'webhook-signature': signatures.join(' ') }),
  };
}
