import type { Context } from 'hono';
import type { z } from 'zod';
import { badRequest } from './http-errors.js';

/** The request's query, checked against its route's schema; refused (400) with every problem. */
export function queryOf<T extends z.ZodObject>(c: Context, schema: T): z.infer<T> {
  return checked(schema, c.req.query(), 'query');
}

/** The request's JSON body, checked against its route's schema; an empty body reads as `{}`. */
export async function bodyOf<T extends z.ZodObject>(c: Context, schema: T): Promise<z.infer<T>> {
  const raw = await c.req.text();
  if (raw.trim() === '') return checked(schema, {}, 'body');
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw badRequest('the request body is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw badRequest('the request body must be a JSON object');
  return checked(schema, value, 'body');
}

/** A whole number in a range, from a query value its schema already read as digits. */
export function wholeIn(value: string, name: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max)
    throw badRequest(`${name} must be a whole number from ${min} to ${max}, not "${value}"`);
  return n;
}

function checked<T extends z.ZodType>(schema: T, value: unknown, where: string): z.infer<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const at = issue.path.length === 0 ? where : issue.path.join('.');
    // Unknown keys name themselves: a typo should say which field was not taken.
    if (issue.code === 'unrecognized_keys') return `${where} has unknown ${issue.keys.join(', ')}`;
    return `${at}: ${issue.message}`;
  });
  throw badRequest(problems.join('; '), { problems });
}

/** A path parameter of the route (always there: the route's path names it). */
export function paramOf(c: Context, name: string): string {
  return c.req.param(name) ?? '';
}
