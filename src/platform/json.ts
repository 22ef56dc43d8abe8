// Values parsed from JSON that came from outside (request bodies, JWTs, entity statements, answers of
// other servers, configuration files): the one check that a value is an object with members, and the
// rules that keep outside member names away from Object.prototype.

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Member names no outside document may use. Assigned on a plain object, `__proto__` replaces its
 * prototype (or, through a nested lookup, writes into Object.prototype itself); `constructor` and
 * `prototype` lead from any object to Object and its prototype. No format the service reads has a
 * use for them.
 */
const PROTOTYPE_MEMBER_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

export const isPrototypeMemberName = (name: unknown): boolean => typeof name === 'string' && PROTOTYPE_MEMBER_NAMES.has(name);

/** Why a document is refused when it names one of them, after the member's path. */
export const PROTOTYPE_MEMBER_RULE = 'is a member name that is refused (__proto__, constructor, prototype)';

interface Member {
  node: unknown;
  key: string;
  parent?: Member;
}

/**
 * The path (`root.a.0.b`) of the first member of `value` whose name is one of PROTOTYPE_MEMBER_NAMES;
 * undefined when there is none. Iterative, so that a deeply nested document cannot overflow the stack;
 * the path is spelled only for the member found (a 1 MiB answer is read in about the time JSON.parse takes).
 */
export function prototypeMemberPath(value: unknown, root: string): string | undefined {
  const stack: Member[] = [{ node: value, key: root }];
  for (let entry = stack.pop(); entry; entry = stack.pop()) {
    const { node } = entry;
    if (typeof node !== 'object' || node === null) continue;
    for (const key of Object.keys(node)) {
      const member = { node: (node as Record<string, unknown>)[key], key, parent: entry };
      if (PROTOTYPE_MEMBER_NAMES.has(key)) return pathOf(member);
      stack.push(member);
    }
  }
  return undefined;
}

function pathOf(member: Member): string {
  const keys: string[] = [];
  for (let at: Member | undefined = member; at; at = at.parent) if (at.key) keys.unshift(at.key);
  return keys.join('.');
}

/** A record with no prototype: indexed by an outside name, it reaches nothing but its own members. */
export const nullRecord = <T>(): Record<string, T> => Object.create(null) as Record<string, T>;

/** A document from outside that names a member PROTOTYPE_MEMBER_NAMES holds; `path` says where. */
export class PrototypeMemberRefused extends Error {
  override name = 'PrototypeMemberRefused';
  constructor(readonly path: string) {
    super(`${path} ${PROTOTYPE_MEMBER_RULE}`);
  }
}

/**
 * JSON text from outside, parsed; a member named __proto__, constructor or prototype anywhere in it
 * throws PrototypeMemberRefused (malformed text throws JSON.parse's SyntaxError). `root` starts the
 * path the error names.
 */
export function parseOutsideJson(text: string, root = ''): unknown {
  const value: unknown = JSON.parse(text);
  const path = prototypeMemberPath(value, root);
  if (path !== undefined) throw new PrototypeMemberRefused(path);
  return value;
}
