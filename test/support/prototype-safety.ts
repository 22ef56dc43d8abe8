// What a document naming __proto__, constructor, prototype or toString must never do: change
// Object.prototype of the process (the tests run the server in-process, so the test sees it) or
// break another tenant's requests afterwards.
import { expect } from 'vitest';
import type { TestService } from './service.js';

/** The member names every document from outside is refused for, and the words the refusal says. */
export const REFUSED = ['__proto__', 'constructor', 'prototype'] as const;
export const RULE = 'is a member name that is refused (__proto__, constructor, prototype)';

/** `{"<name>": inner}` with `name` as an own member, as JSON.parse reads it from outside text. */
export const memberNamed = (name: string, inner: unknown): Record<string, unknown> =>
  JSON.parse(`{${JSON.stringify(name)}: ${JSON.stringify(inner)}}`) as Record<string, unknown>;

/**
 * Object.prototype's members, each with its value and the members written onto that value (a
 * policy for the entity type `toString` would otherwise land on Object.prototype.toString), and
 * Object's own, to compare after the attack.
 */
export function objectPrototypeSnapshot() {
  const membersOf = (target: object) =>
    Object.getOwnPropertyNames(target)
      .sort()
      .map((name) => {
        const value = Object.getOwnPropertyDescriptor(target, name)?.value as unknown;
        return [name, value, typeof value === 'function' ? Object.keys(value) : []];
      });
  return { prototype: membersOf(Object.prototype), object: membersOf(Object) };
}

let unharmedRound = 0;

/**
 * Object.prototype as before, a fresh object without inherited extras, and a new tenant that can
 * still be created, get a token, and create a trust list.
 */
export async function expectUnharmed(svc: TestService, before: ReturnType<typeof objectPrototypeSnapshot>) {
  expect(objectPrototypeSnapshot()).toEqual(before);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(Object.getPrototypeOf({})).toBe(Object.prototype);
  const tenantId = `bystander-${++unharmedRound}-${Date.now()}`;
  // tenant(): POST /api/tenant, then POST /api/oauth2/token with the admin client's secret.
  const { token } = await svc.tenant(tenantId);
  const trustList = await svc.call('POST', '/api/trust-list', {
    token,
    body: { id: 'issuers', description: 'after the attack', entities: [{ type: 'internal', keyChainId: 'default-attestation' }] },
  });
  expect(trustList.status, trustList.text).toBe(201);
}
