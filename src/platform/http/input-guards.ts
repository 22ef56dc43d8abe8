// What no route schema says but every request must respect, checked on the parsed params, query
// and body before schema validation:
// - nesting depth: JSON.parse reads any depth, but what runs after it recurses (JSON.stringify,
//   schema validation, claim processing) and overflows the stack a few thousand levels down;
// - NUL characters: PostgreSQL text and jsonb cannot hold U+0000, so such a value would fail on
//   one database and pass on the other. No field of the API has a use for it;
// - lone surrogates ("\ud800" is valid JSON but no Unicode text): certificate names cannot encode
//   them, and the databases would silently store U+FFFD instead;
// - the member names __proto__, constructor and prototype (src/platform/json.ts): no field of the API
//   has them, and code that copies a body by its keys must never reach Object.prototype.
import type { FastifyInstance } from 'fastify';
import { isPrototypeMemberName, PROTOTYPE_MEMBER_RULE } from '../json.js';
import { type FieldError, invalidFields } from './problem.js';

/** Far beyond any document the API takes (trust lists nest about a dozen levels). */
export const MAX_DEPTH = 64;

interface Entry {
  node: unknown;
  depth: number;
  key: string;
  parent?: Entry;
}

/** The field name of an entry, shown with a NUL as \u0000 so that the name itself stays readable. */
function fieldOf(entry: Entry, segments = Number.POSITIVE_INFINITY): string {
  const keys: string[] = [];
  for (let at: Entry | undefined = entry; at; at = at.parent) keys.unshift(at.key.replaceAll('\u0000', '\\u0000'));
  return keys.slice(0, segments).join('.');
}

const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** What a string of the input (a value or a key) must not contain, if it does. */
function textDefect(text: string): string | undefined {
  if (text.includes('\u0000')) return 'a NUL character (U+0000)';
  if (LONE_SURROGATE.test(text)) return 'a lone surrogate (not well-formed Unicode)';
  return undefined;
}

/**
 * The first value under `root` that nests too deep, holds a NUL or lone surrogate (in a key or a
 * string), or has a member named __proto__, constructor or prototype.
 */
export function inputDefect(value: unknown, root: string): FieldError | undefined {
  // Iterative, so that the check cannot itself overflow the stack.
  const stack: Entry[] = [{ node: value, depth: 0, key: root }];
  for (let entry = stack.pop(); entry; entry = stack.pop()) {
    const { node, depth } = entry;
    if (typeof node === 'string') {
      const defect = textDefect(node);
      if (defect) return { field: fieldOf(entry), message: `must not contain ${defect}` };
      continue;
    }
    if (typeof node !== 'object' || node === null) continue;
    // Named by the member of the body it is in: the full path would be dozens of segments long.
    if (depth >= MAX_DEPTH) return { field: fieldOf(entry, 2), message: `nests deeper than ${MAX_DEPTH} levels` };
    for (const [key, child] of Object.entries(node)) {
      const next = { node: child, depth: depth + 1, key, parent: entry };
      const defect = textDefect(key);
      if (defect) return { field: fieldOf(next), message: `names a field with ${defect}` };
      if (isPrototypeMemberName(key)) return { field: fieldOf(next), message: PROTOTYPE_MEMBER_RULE };
      stack.push(next);
    }
  }
  return undefined;
}

export function installInputGuards(app: FastifyInstance) {
  app.addHook('preValidation', (request, _reply, done) => {
    const defect = inputDefect(request.params, 'params') ?? inputDefect(request.query, 'query') ?? inputDefect(request.body, 'body');
    done(defect ? invalidFields([defect]) : undefined);
  });
}
