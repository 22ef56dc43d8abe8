// JWT signatures per second through the signing service (key chain lookup, cached key, x5c header,
// JWS assembly) against raw node:crypto ES256 signing of the same input, in one run.
// Run: npx tsx bench/signing.ts [seconds per measurement, default 3]
import { generateKeyPairSync, sign } from 'node:crypto';
import { signJwtWith } from '../src/key-chains/signing.js';
import { startService } from '../test/support/service.js';

const seconds = Number(process.argv[2] ?? 3);

async function measure(name: string, work: () => Promise<unknown> | unknown) {
  for (let i = 0; i < 200; i++) await work(); // warm-up
  const samples: number[] = [];
  for (let round = 0; round < 5; round++) {
    let count = 0;
    const end = performance.now() + (seconds * 1000) / 5;
    while (performance.now() < end) {
      await work();
      count++;
    }
    samples.push(count / (seconds / 5));
  }
  samples.sort((a, b) => a - b);
  const median = samples[2] as number;
  console.log(
    `${name.padEnd(46)} median ${median.toFixed(0).padStart(7)} /s  (min ${samples[0]?.toFixed(0)}, max ${samples[4]?.toFixed(0)})`,
  );
  return median;
}

const svc = await startService();
await svc.tenant('bench');
const { signing } = svc.running.services;
const payload = {
  iss: 'https://issuer.example.com/issuers/bench',
  vct: 'urn:eudi:pid:1',
  iat: 1_700_000_000,
  _sd: ['a'.repeat(43), 'b'.repeat(43)],
};
const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const input = Buffer.from(
  `${Buffer.from('{"alg":"ES256","typ":"dc+sd-jwt"}').toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`,
);

console.log(`signing benchmark, ${seconds} s per measurement, database ${process.env.DB_TYPE ?? 'sqlite'}`);
const raw = await measure('raw node:crypto ES256 sign', () => sign('sha256', input, { key: privateKey, dsaEncoding: 'ieee-p1363' }));
const service = await measure('SigningService.signJwt (default chain, x5c)', () =>
  signing.signJwt('bench', { usageType: 'attestation' }, { typ: 'dc+sd-jwt' }, payload),
);
const signer = await signing.signer('bench', { usageType: 'attestation' });
const resolved = await measure('signJwtWith (chain resolved once)', () => signJwtWith(signer, { typ: 'dc+sd-jwt' }, payload));
console.log(`ratio service/raw ${(service / raw).toFixed(2)}, resolved/raw ${(resolved / raw).toFixed(2)}`);
await svc.stop();
