// Wallet-facing URLs of a presentation session: one unguessable value per session names them (and
// the DC API response endpoint), so that nothing about the tenant or session shows in them.

export const PRESENTATION_HANDLE = 'presentation';

export function presentationUrls(publicUrl: string, walletNonce: string) {
  const base = `${publicUrl}/presentations/${walletNonce}`;
  return { request: `${base}/request`, response: `${base}/response`, dcApiResponse: `${base}/dc-api-response` };
}
