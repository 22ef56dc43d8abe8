// Assertions on RFC 9457 problem answers of the management API.
import { expect } from 'vitest';
import type { Problem } from './api-types.js';
import type { Reply } from './http.js';

export const PROBLEM = 'application/problem+json';

/**
 * The body of a failure as the problem it is (the typed client types a reply's body as the success
 * answer; the assertions on the problem's fields say whether it is one).
 */
export const problemOf = (reply: { body: unknown }) => reply.body as Problem;

export function expectProblem(reply: Reply<unknown>, status: number) {
  expect(reply.status, reply.text).toBe(status);
  expect(reply.headers.get('content-type')).toContain(PROBLEM);
  expect(reply.body).toMatchObject({
    type: 'about:blank',
    status,
    title: expect.any(String),
    detail: expect.any(String),
    requestId: expect.any(String),
  });
}

/** The fields a 400 problem names, in order. */
export function fieldsOf(reply: Reply<unknown>): (string | undefined)[] {
  const { errors } = problemOf(reply);
  expect(Array.isArray(errors), reply.text).toBe(true);
  return (errors ?? []).map((e) => e.field);
}

/** A 400 problem whose errors name exactly these fields, in order, each with a message. */
export function expectFieldErrors(reply: Reply<unknown>, fields: string[]) {
  expectProblem(reply, 400);
  expect(problemOf(reply).errors).toEqual(fields.map((field) => ({ field, message: expect.any(String) })));
}

/** The body of a 201 answer (the test fails, showing the answer, on anything else). */
export function createdBody<T>(reply: Reply<T>): T {
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}
