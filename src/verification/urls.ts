// Wallet-facing URLs of a presentation session: one unguessable value per session names them (and
// the DC API response endpoint), so that nothing about the tenant or session shows in them.

export const PRESENTATION_HANDLE = 'presentation';
/** The response code a same-device redirect carries back (OpenID4VP 1.0 section 13.3): single use, kept hashed. */
export const RESPONSE_CODE_HANDLE = 'presentation-response-code';
/** The browser follows the redirect at once; the integrator's backend then has this long to release the result. */
export const RESPONSE_CODE_LIFETIME_SECONDS = 600;

export function presentationUrls(publicUrl: string, walletNonce: string) {
  const base = `${publicUrl}/presentations/${walletNonce}`;
  return { request: `${base}/request`, response: `${base}/response`, dcApiResponse: `${base}/dc-api-response` };
}
