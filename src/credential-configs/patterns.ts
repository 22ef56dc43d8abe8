// Claim patterns (constraints.pattern and the JSON Schema `pattern` derived from it) come from API
// callers, so they run on RE2 (re2js): matching takes time linear in the claim's length whatever the
// pattern, where a backtracking engine (RegExp) can take exponential time on a crafted pair of
// pattern and claim and block the event loop for every tenant. The ECMAScript syntax JSON Schema
// names is translated where RE2 writes it differently (\uXXXX); what a linear-time engine
// cannot run (backreferences, lookaround) is refused when the configuration is saved.
import type { RE2JS } from 're2js';
import { requireOnFirstUse } from '../platform/lazy.js';

type Compiled = { regex: RE2JS; problem?: undefined } | { regex?: undefined; problem: string };

/** The engine (180 KB of code) is loaded by the first pattern, not at start: most services never see one. */
const re2 = requireOnFirstUse<typeof import('re2js')>('re2js');

/** Patterns recur across requests (a configuration's, the image pattern); the cache keeps a bounded number of them. */
const MAX_CACHED = 1_000;
const cache = new Map<string, Compiled>();

function compile(pattern: string): Compiled {
  const cached = cache.get(pattern);
  if (cached) return cached;
  let compiled: Compiled;
  try {
    compiled = { regex: re2().RE2JS.compile(translateUnicodeEscapes(pattern)) };
  } catch (err) {
    compiled = { problem: explain(err instanceof Error ? err.message : String(err)) };
  }
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
  cache.set(pattern, compiled);
  return compiled;
}

/**
 * ECMAScript writes a code point \uXXXX or \u{X...}, RE2 \x{...}; every other escape passes unchanged
 * (an escaped backslash included), so what RE2 does not know is refused rather than reinterpreted.
 */
const translateUnicodeEscapes = (pattern: string) =>
  pattern.replace(/\\(?:u\{([0-9A-Fa-f]{1,6})\}|u([0-9A-Fa-f]{4})|\\)/g, (sequence, braced?: string, four?: string) =>
    braced || four ? `\\x{${braced ?? four}}` : sequence,
  );

/** RE2 reports lookaround as `(?=`, `(?!`, `(?<=`, `(?<!` and backreferences as the escape `\1` or `\k`. */
const LOOKAROUND = /`\(\?<?[=!]/;
const BACKREFERENCE = /`\\[1-9k]/;

function explain(message: string): string {
  const detail = message.replace(/^error parsing regexp: /, '');
  const unsupported = LOOKAROUND.test(detail) ? 'lookaround' : BACKREFERENCE.test(detail) ? 'a backreference' : undefined;
  if (!unsupported) return `is not a valid regular expression: ${detail}`;
  return `uses ${unsupported}, which patterns cannot: they run on a linear-time engine (RE2 syntax) so that no claim can make matching slow (${detail})`;
}

/** Why the pattern cannot be used, or undefined when it can. */
export const patternProblem = (pattern: string): string | undefined => compile(pattern).problem;

/** Unanchored, as JSON Schema's `pattern`; a pattern that cannot be used matches nothing. */
export const matchesPattern = (pattern: string, value: string): boolean => compile(pattern).regex?.test(value) ?? false;
