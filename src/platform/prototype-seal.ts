// Defense in depth against prototype pollution: whatever code may still assign an outside member
// name through `__proto__` or `constructor.prototype`, the prototypes every object, array and
// function inherits from (and Object itself) take no new member. Called as the service is built
// (src/app.ts), so `npm start` and the tests (which start the service in-process) run with it alike.
//
// Sealed, not frozen: a frozen Object.prototype makes its members read-only, and then an ordinary
// object can no longer get an own member of the same name by assignment (the "override mistake":
// `record.toString = x` throws in strict mode). Zod's records and loose objects build their output
// that way, so a body with a member named toString or valueOf would answer 500; so would the
// service's own code that copies outside names (OpenID Federation metadata). Sealing stops what
// pollution does (a new member every object inherits) and leaves assignment to own members as it is.
const SEALED = [Object.prototype, Array.prototype, Function.prototype, Object] as const;

export function sealPrototypes() {
  for (const target of SEALED) Object.seal(target);
}
