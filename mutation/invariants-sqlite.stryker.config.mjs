import { mutationConfig } from './base.mjs';

// The SQLite side of the invariants set: the serial steps SQLite takes where PostgreSQL sends one
// statement (SQLite runs one writer at a time, so the steps cannot interleave with another writer).
// These branches never run on PostgreSQL, so they are mutated here, with the same tests on SQLite.
process.env.DB_TYPE = 'sqlite';

export default mutationConfig('invariants-sqlite', {
  mutate: [
    // updateSessionAt: the guarding writes before the compare-and-set, the log line and following
    // writes after, in a transaction when there are any (the choice of this form, L105, is mutated by
    // the invariants set: on SQLite its second operand is never evaluated)
    'src/sessions/store.ts:106-119',
    // spendHandleReading: the proofs' jtis remembered, then the handle spent and its session read
    'src/sessions/store.ts:352-371',
    // takeConfiguration: the c_nonce spent before the configuration is taken
    'src/issuance/credential-request/store.ts:67-73',
  ],
  testFiles: ['test/invariants/once-only-statements.test.ts', 'test/invariants/tokens.test.ts'],
});
