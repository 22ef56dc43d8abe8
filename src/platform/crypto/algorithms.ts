// The JOSE/COSE signature algorithms the service signs with, and what each means for key and hash.
export const SIGNING_ALGORITHMS = ['ES256', 'ES384', 'ES512'] as const;
export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number];

export const ALGORITHM_PARAMS: Record<SigningAlgorithm, { curve: 'P-256' | 'P-384' | 'P-521'; hash: 'SHA-256' | 'SHA-384' | 'SHA-512' }> = {
  ES256: { curve: 'P-256', hash: 'SHA-256' },
  ES384: { curve: 'P-384', hash: 'SHA-384' },
  ES512: { curve: 'P-521', hash: 'SHA-512' },
};

export function algorithmOfCurve(curve: string | undefined): SigningAlgorithm | undefined {
  return SIGNING_ALGORITHMS.find((alg) => ALGORITHM_PARAMS[alg].curve === curve);
}
