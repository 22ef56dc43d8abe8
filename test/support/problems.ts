// Assertions on RFC 9457 problem answers of the management API.
import { expect } from 'vitest';
import type { Reply } from './http.js';

export const PROBLEM = 'application/problem+json';

export function expectProblem(reply: Reply, status: number) {
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
export function fieldsOf(reply: Reply): string[] {
  expect(Array.isArray(reply.body.errors), reply.text).toBe(true);
  return (reply.body.errors as { field: string; message: string }[]).map((e) => e.field);
}

/** A 400 problem whose errors name exactly these fields, in order, each with a message. */
export function expectFieldErrors(reply: Reply, fields: string[]) {
  expectProblem(reply, 400);
  expect(reply.body.errors).toEqual(fields.map((field) => ({ field, message: expect.any(String) })));
}

/** The body of a 201 answer (the test fails, showing the answer, on anything else). */
export function createdBody<T = any>(reply: Reply): T {
  expect(reply.status, reply.text).toBe(201);
  return reply.body as T;
}
