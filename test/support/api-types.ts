// The management API's types for tests, read from the generated OpenAPI types (clients/typescript/schema.ts):
// a call to a known path and method gets its request body and its success body typed.
//
// A test writes concrete paths (`/api/trust-list/${id}?x=1`), so a path is matched to the document's
// templates (`/api/trust-list/{id}`) segment by segment: a {param} takes any one segment, every other
// segment must be the same word; the query string is left out. A path written wholly in letters
// that is itself a template (`/api/key-chain/import`) is that template, not `/api/key-chain/{id}`.
import type { components, paths } from '../../clients/typescript/schema.js';

export type Problem = components['schemas']['Problem'];
export type Schemas = components['schemas'];

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Template = keyof paths & string;

type WithoutQuery<P extends string> = P extends `${infer Path}?${string}` ? Path : P;
type Segments<P extends string> = P extends `${infer Head}/${infer Rest}` ? [Head, ...Segments<Rest>] : [P];

/** Whether concrete segments fit a template's: a {param} takes any one segment, a word only itself. */
type Fits<C extends string[], T extends string[]> = C extends [infer CH extends string, ...infer CR extends string[]]
  ? T extends [infer TH extends string, ...infer TR extends string[]]
    ? TH extends `{${string}}`
      ? Fits<CR, TR>
      : [CH] extends [TH]
        ? Fits<CR, TR>
        : false
    : false
  : T extends []
    ? true
    : false;

type HasMethod<K extends Template, M extends Method> =
  Lowercase<M> extends keyof paths[K] ? (paths[K][Lowercase<M>] extends { responses: unknown } ? true : false) : false;

/** The template a concrete path stands for, with this method; never when there is none. */
export type TemplateOf<P extends string, M extends Method> =
  WithoutQuery<P> extends Template
    ? HasMethod<WithoutQuery<P>, M> extends true
      ? WithoutQuery<P>
      : never
    : {
        [K in Template]: HasMethod<K, M> extends true ? (Fits<Segments<WithoutQuery<P>>, Segments<K>> extends true ? K : never) : never;
      }[Template];

export type Operation<P extends string, M extends Method> = paths[TemplateOf<P, M>][Lowercase<M> & keyof paths[TemplateOf<P, M>]];

/** The path itself when the document has this method there, else a message the compiler shows. */
export type KnownPath<P extends string, M extends Method> = [TemplateOf<P, M>] extends [never]
  ? `no ${M} ${P} in the OpenAPI document (use svc.raw for a request the API does not describe)`
  : P;

type JsonOf<C> = C extends { 'application/json': infer J } ? J : C extends { 'application/jwt': unknown } ? string : unknown;
type ContentOf<R> = R extends { content: infer C } ? JsonOf<C> : R extends { content?: never } ? unknown : unknown;

/** The JSON body the operation takes, if it takes one. */
export type RequestBodyOf<Op> = Op extends { requestBody: { content: { 'application/json': infer B } } }
  ? B
  : Op extends { requestBody?: { content: { 'application/json': infer B } } }
    ? B
    : never;

/** The body of the operation's success answer (200, 201 or 202; a 204 has none). */
export type SuccessBodyOf<Op> = Op extends { responses: infer R }
  ? 200 extends keyof R
    ? ContentOf<R[200]>
    : 201 extends keyof R
      ? ContentOf<R[201]>
      : 202 extends keyof R
        ? ContentOf<R[202]>
        : 204 extends keyof R
          ? null | ''
          : unknown
  : unknown;
