import { mutationConfig } from './base.mjs';

// The invariants' SQL paths: the single statements that decide each once-only rule (issue 24). Most
// of them are one statement only on PostgreSQL (data-modifying CTEs; SQLite runs one writer at a
// time and gets the same rule from serial steps), so this set runs its tests there unless DB_TYPE
// says otherwise. The line ranges are the functions that build and send those statements.
process.env.DB_TYPE ??= 'postgres';
process.env.TEST_POSTGRES_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres';

export default mutationConfig('invariants', {
  mutate: [
    // updateSessionAt: the compare-and-set on the version, with its log line, guarding writes and the
    // writes that follow it (the serial form of L106-119 runs on PostgreSQL only with nothing along,
    // where L111-113 apply; the rest of it, SQLite only, is mutated by the invariants-sqlite set)
    'src/sessions/store.ts:90-105',
    'src/sessions/store.ts:111-113',
    'src/sessions/store.ts:120-135',
    // countTxCodeFailure: wrong transaction codes counted while attempts are left
    'src/sessions/store.ts:191-201',
    // handleQuery: only a live handle names its session
    'src/sessions/store.ts:225-232',
    // moveByHandle (redeem by handle in one statement) and respurposeHandle (spend a code, a request_uri, a refresh token)
    'src/sessions/store.ts:261-319',
    // spendHandleReading: a handle spent and its session read with the proofs' jtis, nothing spent on
    // a replayed jti (the serial SQLite form, L352-371, in the invariants-sqlite set)
    'src/sessions/store.ts:337-351',
    'src/sessions/store.ts:372-395',
    // SessionService.update: the compare-and-set loop; spendHandleOfSession; findByHandleInserting;
    // spendHandle and spendHandleOfLiveSession
    'src/sessions/service.ts:258-297',
    'src/sessions/service.ts:428-431',
    'src/sessions/service.ts:439-442',
    'src/sessions/service.ts:521-534',
    // takeConfiguration: one credential per configuration and round, with its c_nonce
    // (L67, the serial spend, runs only on SQLite: mutated by the invariants-sqlite set)
    'src/issuance/credential-request/store.ts:42-66',
    'src/issuance/credential-request/store.ts:68-74',
    // insertAndRead on PostgreSQL: a once-only value remembered in the read's round trip
    'src/platform/db/values.ts:51-56',
    // c_nonces, proof ids and challenges: consumed or remembered once
    'src/issuance/nonce/store.ts',
  ],
  testFiles: ['test/invariants/once-only-statements.test.ts', 'test/invariants/tokens.test.ts', 'test/issuance/nonce-store.test.ts'],
});
