// Status lists: time to regenerate and sign (JWT and CWT, stored) a 1,000,000-entry list with 1%
// revoked (median of several runs; budget 100 ms), its compressed size, and status changes per
// second through POST /api/session/revoke.
// Run: npx tsx bench/status-list.ts [runs, default 9] [changes, default 2000]   (DB_TYPE=postgres for PostgreSQL)
import { randomInt } from 'node:crypto';
import { setStatus } from '../src/status-lists/bitset.js';
import { compress } from '../src/status-lists/token.js';
import { startService } from '../test/support/service.js';
import { median, throughput } from './support.js';

const runs = Number(process.argv[2] ?? 9);
const changes = Number(process.argv[3] ?? 2000);
const svc = await startService();
try {
  const { token } = await svc.tenant('bench');
  const { statusLists } = svc.running.services;

  // A 1,000,000-entry list with 10,000 revoked entries at random indexes.
  const created = await svc.call('POST', '/api/status-lists', { token, body: { capacity: 1_000_000, bits: 1 } });
  if (created.status !== 201) throw new Error(created.text);
  const listId = created.body.id as string;
  const bitset = new Uint8Array(125_000);
  for (let i = 0; i < 10_000; i++) setStatus(bitset, 1, randomInt(1_000_000), 1);
  await svc.db
    .updateTable('status_lists')
    .set({ bitset: Buffer.from(bitset), version: 1 })
    .where('id', '=', listId)
    .execute();

  await statusLists.regenerate('bench', listId); // warm-up: key import, certificate parsing
  const times: number[] = [];
  const compressTimes: number[] = [];
  for (let i = 0; i < runs; i++) {
    let started = performance.now();
    await statusLists.regenerate('bench', listId);
    times.push(performance.now() - started);
    started = performance.now();
    compress(bitset);
    compressTimes.push(performance.now() - started);
  }
  const signed = await statusLists.token('bench', listId);
  const lst = compress(bitset);
  console.log(
    `regenerate + sign (JWT and CWT) + store, 1,000,000 entries, 1% revoked: median ${median(times).toFixed(1)} ms over ${runs} runs (min ${Math.min(...times).toFixed(1)}, max ${Math.max(...times).toFixed(1)}); budget 100 ms`,
  );
  console.log(`  of which zlib compression: median ${median(compressTimes).toFixed(1)} ms`);
  console.log(
    `compressed size: lst ${lst.length} bytes (from ${bitset.length}); JWT ${signed.jwt.length} bytes; CWT ${signed.cwt.length} bytes`,
  );

  // Status changes through the API: sessions with one entry each, revoked and reinstated in turn.
  const sessions: string[] = [];
  for (let i = 0; i < 200; i++) {
    const offer = await svc.call('POST', '/api/issuer/offer', {
      token,
      body: {
        response_type: 'uri',
        flow: 'pre_authorized_code',
        credentialConfigurationIds: ['pid'],
        credentialClaims: { pid: { type: 'inline', claims: {} } },
      },
    });
    if (offer.status !== 201) {
      // The offer needs a configuration: made once.
      if (i > 0) throw new Error(offer.text);
      const config = await svc.call('POST', '/api/issuer/credentials', {
        token,
        body: {
          id: 'pid',
          config: { format: 'dc+sd-jwt' },
          vct: 'urn:bench',
          statusManagement: true,
          fields: [{ path: ['given_name'], type: 'string' }],
        },
      });
      if (config.status !== 201) throw new Error(config.text);
      i--;
      continue;
    }
    sessions.push(offer.body.session);
  }
  for (const [label, immediateUpdate] of [
    ['lazy (default)', false],
    ['immediateUpdate', true],
  ] as const) {
    await svc.call('PUT', '/api/status-list-config', { token, body: { immediateUpdate } });
    // New lists (default capacity) for this setting: the 1,000,000-entry list is made unavailable.
    await svc.db.updateTable('status_lists').set({ used_entries: 1_000_000 }).where('id', '=', listId).execute();
    await svc.db
      .updateTable('status_lists')
      .set({ credential_configuration_id: `retired-${label}` })
      .where('tenant_id', '=', 'bench')
      .execute();
    await svc.db.deleteFrom('status_entries').where('tenant_id', '=', 'bench').execute();
    for (const sessionId of sessions) await statusLists.allocate('bench', { credentialConfigurationId: 'pid', sessionId });
    let n = 0;
    const perSecond = await throughput(changes, 8, async () => {
      const i = n++;
      const reply = await svc.raw('POST', '/api/session/revoke', {
        token,
        body: { sessionId: sessions[i % sessions.length], status: (i / sessions.length) & 1 ? 0 : 1 },
      });
      if (reply.status !== 200) throw new Error(reply.text);
    });
    console.log(`status changes through POST /api/session/revoke, ${label}, 8 concurrent clients: ${perSecond.toFixed(0)} /s`);
  }
} finally {
  await svc.stop();
}
