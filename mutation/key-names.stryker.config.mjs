import { mutationConfig } from './base.mjs';

// key-names.test.ts calls the naming rules directly. tenant-key-names.test.ts shows the same rules
// through the service and real providers, but it is not in the set: its beforeAll starts the service
// and makes the tenants' keys, so Stryker counts every mutant here as covered outside a test (static)
// and reruns the whole file, over a minute, for each (51 minutes instead of seconds). pkcs11.test.ts
// and vault.test.ts exercise the providers rather than the names.
export default mutationConfig('key-names', {
  mutate: ['src/key-chains/providers/key-names.ts'],
  testFiles: ['test/key-chains/key-names.test.ts'],
});
