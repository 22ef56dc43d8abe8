import { mutationConfig } from './base.mjs';

// The invariants' SQL paths: the single statements that decide each once-only rule (issue 24). Most
// of them are one statement only on PostgreSQL (data-modifying CTEs; SQLite runs one writer at a
// time and gets the same rule from serial steps), so this set runs its tests there unless DB_TYPE
// says otherwise. The line ranges are the functions that build and send those statements.
process.env.DB_TYPE ??= 'postgres';
process.env.TEST_POSTGRES_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres';

export default mutationConfig('invariants', {
  mutate: [
    // updateSessionAt: the compare-and-set on the version, with its log line and guarding writes (the
    // serial writes of L74-76 and the log line after them, L79, run only on SQLite: on PostgreSQL that
    // form is taken only with nothing along; mutated by the invariants-sqlite set)
    'src/sessions/store.ts:58-73',
    'src/sessions/store.ts:77-78',
    'src/sessions/store.ts:80-95',
    // countTxCodeFailure: wrong transaction codes counted while attempts are left
    'src/sessions/store.ts:151-161',
    // handleQuery: only a live handle names its session
    'src/sessions/store.ts:171-178',
    // moveByHandle (redeem by handle in one statement) and respurposeHandle (spend a code, a request_uri, a refresh token)
    'src/sessions/store.ts:207-265',
    // SessionService.update: the compare-and-set loop; spendHandleOfSession; findByHandleInserting;
    // spendHandle and spendHandleOfLiveSession
    'src/sessions/service.ts:234-267',
    'src/sessions/service.ts:324-327',
    'src/sessions/service.ts:335-338',
    'src/sessions/service.ts:415-428',
    // takeConfiguration: one credential per configuration and round, with its c_nonce
    // (L67, the serial spend, runs only on SQLite: mutated by the invariants-sqlite set)
    'src/issuance/credential-request/store.ts:42-66',
    'src/issuance/credential-request/store.ts:68-74',
    // insertAndRead on PostgreSQL: a once-only value remembered in the read's round trip
    'src/platform/db/values.ts:51-56',
    // c_nonces, proof ids and challenges: consumed or remembered once
    'src/issuance/nonce/store.ts',
  ],
  testFiles: ['test/invariants/once-only-statements.test.ts', 'test/issuance/nonce-store.test.ts'],
});
