import { APICallError } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  defaultRetryWhen,
  END,
  type ErrorValue,
  enqueue,
  graph,
  loadTrace,
  run,
  type Store,
} from '../../src/index.js';
import { describePg, pgStoreForFile } from '../store/fixtures/postgres.js';
import { manualClock } from '../support/clock.js';
import { stores } from '../support/stores.js';
import { workUntilSettled } from '../support/worker-runs.js';

// What an ordinary thrown error says about itself (an HTTP status, a code, a name, the AI SDK's
// isRetryable and Retry-After) is kept as data in its error value, so the retry predicate can
// decide on it; a policy without a predicate uses a documented default that does not retry a
// request the server called wrong (4xx except 408, 409 and 429) and waits as long as
// Retry-After asks.

const State = z.object({ done: z.boolean().default(false) });

/** An error as fetch wrappers and HTTP clients throw them: a message and a `status`. */
function httpError(status: number, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(`HTTP ${status}`), { status, ...extra });
}

/** A one-node graph whose node throws `failures` in turn, then succeeds. */
function failing(failures: readonly unknown[], retry: object = { attempts: 5 }) {
  const thrown: unknown[] = [];
  const g = graph('call-api', { state: State })
    .node(
      'call',
      () => {
        const next = failures[thrown.length];
        if (next === undefined) return { done: true };
        thrown.push(next);
        throw next;
      },
      { retry: retry as { attempts: number } },
    )
    .edge('call', END)
    .entry('call')
    .compile();
  return { g, thrown };
}

describe('a thrown error keeps what it says about itself', () => {
  it('records status, code and name in details, from status, statusCode or response.status', async () => {
    const cases: [unknown, object][] = [
      [httpError(503), { status: 503 }],
      [Object.assign(new Error('no'), { statusCode: 502 }), { status: 502 }],
      [Object.assign(new Error('no'), { response: { status: '504' } }), { status: 504 }],
      [Object.assign(new Error('reset'), { code: 'ECONNRESET' }), { code: 'ECONNRESET' }],
      [Object.assign(new TypeError('bad')), { name: 'TypeError' }],
    ];
    for (const [thrown, details] of cases) {
      const { g } = failing([thrown], { attempts: 1 });
      const result = await run(g, {}, { clock: manualClock() });
      expect(result.status === 'failed' && result.error.details).toEqual(details);
    }
  });

  it('keeps the AI SDK APICallError fields: status, isRetryable and the Retry-After header', async () => {
    const e = new APICallError({
      message: 'Too Many Requests',
      url: 'https://api.example/v1/chat',
      requestBodyValues: {},
      statusCode: 429,
      responseHeaders: { 'Retry-After': '2' },
    });
    const { g } = failing([e], { attempts: 1 });
    const result = await run(g, {}, { clock: manualClock() });
    expect(result.status === 'failed' && result.error).toMatchObject({
      code: 'NODE_FAILED',
      class: 'transient',
      details: { name: 'AI_APICallError', status: 429, isRetryable: true, retryAfter: '2' },
    });
  });

  it('records the status of a wrapped cause on its link of the cause chain', async () => {
    const wrapped = new Error('the search failed', { cause: httpError(404) });
    const { g, thrown } = failing([wrapped, wrapped]);
    const result = await run(g, {}, { clock: manualClock() });
    expect(result.status === 'failed' && result.error.cause).toMatchObject({
      message: 'HTTP 404',
      status: 404,
    });
    // The default policy finds the 404 in the cause: a request that was wrong is not retried.
    expect(thrown).toHaveLength(1);
  });

  it('makes the docs predicate work on an ordinary thrown error: a 400 is not retried', async () => {
    const { g, thrown } = failing([httpError(503), httpError(400), httpError(503)], {
      attempts: 5,
      when: (e: ErrorValue) => (e.details as { status?: number } | undefined)?.status !== 400,
    });
    const result = await run(g, {}, { clock: manualClock() });
    expect(thrown.map((e) => (e as { status: number }).status)).toEqual([503, 400]);
    expect(result.status === 'failed' && result.error.attempt).toBe(2);
  });
});

describe('the default retry policy', () => {
  it.each([400, 401, 403, 404, 405, 422])('does not retry an HTTP %i', async (status) => {
    const { g, thrown } = failing([httpError(status)]);
    const result = await run(g, {}, { clock: manualClock() });
    expect(thrown).toHaveLength(1);
    expect(result.status).toBe('failed');
    expect(result.trace.entries.map((e) => e.retried)).toEqual([false]);
  });

  it.each([408, 409, 429, 500, 502, 503])('retries an HTTP %i', async (status) => {
    const { g, thrown } = failing([httpError(status), httpError(status)]);
    const result = await run(g, {}, { clock: manualClock() });
    expect(thrown).toHaveLength(2);
    expect(result.status).toBe('succeeded');
  });

  it('does not retry what says it is not retryable, an AbortError, or an exhausted quota', async () => {
    const notRetryable = new APICallError({
      message: 'Service Unavailable',
      url: 'https://api.example',
      requestBodyValues: {},
      statusCode: 503,
      isRetryable: false,
    });
    const abort = Object.assign(new Error('The operation was aborted'), { name: 'AbortError' });
    const quota = Object.assign(new Error('quota'), { error: { code: 'insufficient_quota' } });
    for (const e of [notRetryable, abort, quota]) {
      const { g, thrown } = failing([e, e]);
      await run(g, {}, { clock: manualClock() });
      expect(thrown).toHaveLength(1);
    }
  });

  it('is exported, to build a predicate on', () => {
    const value = (details: unknown): ErrorValue => ({
      node: 'n',
      activation: 'n:1',
      attempt: 1,
      code: 'NODE_FAILED',
      class: 'transient',
      message: 'm',
      details,
    });
    expect(defaultRetryWhen(value({ status: 404 }))).toBe(false);
    expect(defaultRetryWhen(value({ status: 429 }))).toBe(true);
    expect(defaultRetryWhen(value([{ path: ['x'] }]))).toBe(true);
    expect(defaultRetryWhen(value(undefined))).toBe(true);
  });
});

describe('Retry-After', () => {
  it('waits as long as Retry-After asks when that is longer than the backoff', async () => {
    const clock = manualClock();
    const { g } = failing([httpError(429, { headers: new Headers({ 'retry-after': '3' }) })], {
      attempts: 3,
      backoffMs: 100,
    });
    const result = await run(g, {}, { clock });
    expect(result.status).toBe('succeeded');
    expect(clock.sleeps).toEqual([3_000]);
  });

  it('keeps the backoff when it is the longer wait, and reads an HTTP date against the failure time', async () => {
    const clock = manualClock(Date.parse('2026-01-01T00:00:00Z'));
    const inFive = 'Thu, 01 Jan 2026 00:00:05 GMT';
    const { g } = failing(
      [
        httpError(503, { responseHeaders: { 'retry-after': '0' } }),
        httpError(503, { responseHeaders: { 'retry-after': inFive } }),
      ],
      { attempts: 3, backoffMs: 1_000, factor: 1 },
    );
    await run(g, {}, { clock });
    expect(clock.sleeps).toEqual([1_000, 4_000]);
  });

  it('never waits past the policy maxBackoffMs', async () => {
    const clock = manualClock();
    const { g } = failing([httpError(429, { responseHeaders: { 'retry-after': '3600' } })], {
      attempts: 2,
      backoffMs: 10,
      maxBackoffMs: 5_000,
    });
    await run(g, {}, { clock });
    expect(clock.sleeps).toEqual([5_000]);
  });
});

describe.each(stores)('the retry data is stored (%s)', (_name, open) => {
  it('reads back the status and the retry decision from the stored trace', async () => {
    const store: Store = open();
    const { g } = failing([httpError(503), httpError(404)]);
    const result = await run(g, {}, { store, clock: manualClock() });
    const trace = await loadTrace(store, result.runId);
    expect(trace.entries.map((e) => [e.attempt, e.retried, e.error?.message])).toEqual([
      [1, true, 'HTTP 503'],
      [2, false, 'HTTP 404'],
    ]);
    const stored = JSON.parse((await store.getRun(result.runId))!.error!) as ErrorValue;
    expect(stored).toMatchObject({ attempt: 2, details: { status: 404 } });
  });
});

// A port of LangGraph.js's retry tests (libs/langgraph-core: a node with a retryPolicy that
// fails and then succeeds; maxAttempts spent; retryOn deciding; the default handler skipping
// client errors). LangGraph's default list leaves 409 out of the retried 4xx; waymark retries
// 409 (a conflict is most often a lost race) and 429, and honours Retry-After.
describe('ported from LangGraph.js: RetryPolicy', () => {
  it('retries a node that fails until it succeeds, within maxAttempts', async () => {
    const { g, thrown } = failing([new Error('flaky'), new Error('flaky')], { attempts: 3 });
    const result = await run(g, {}, { clock: manualClock() });
    expect(result.status).toBe('succeeded');
    expect(thrown).toHaveLength(2);
  });

  it('gives up after maxAttempts with the last error', async () => {
    const { g, thrown } = failing([new Error('1'), new Error('2'), new Error('3')], {
      attempts: 2,
    });
    const result = await run(g, {}, { clock: manualClock() });
    expect(thrown).toHaveLength(2);
    expect(result.status === 'failed' && result.error.message).toBe('2');
  });

  it('stops at once when retryOn says no', async () => {
    const { g, thrown } = failing([new Error('a'), new Error('b')], {
      attempts: 3,
      when: () => false,
    });
    await run(g, {}, { clock: manualClock() });
    expect(thrown).toHaveLength(1);
  });

  it('does not retry a client error under the default handler, and retries a server error', async () => {
    const client = failing([httpError(403)]);
    await run(client.g, {}, { clock: manualClock() });
    expect(client.thrown).toHaveLength(1);
    const server = failing([httpError(500)]);
    expect((await run(server.g, {}, { clock: manualClock() })).status).toBe('succeeded');
    expect(server.thrown).toHaveLength(1);
  });
});

const db = pgStoreForFile();

describePg('the default retry policy through a worker', () => {
  it('retries a 503, does not retry a 404, with the status in the stored error', async () => {
    const { g, thrown } = failing([httpError(503), httpError(404)]);
    const id = await enqueue(db.store, g, {});
    await workUntilSettled(db.store, [g], [id]);
    expect(thrown).toHaveLength(2);
    const trace = await loadTrace(db.store, id);
    expect(trace.entries.map((e) => [e.attempt, e.retried, e.error?.message])).toEqual([
      [1, true, 'HTTP 503'],
      [2, false, 'HTTP 404'],
    ]);
    const record = await db.store.getRun(id);
    expect(record?.status).toBe('failed');
    expect(JSON.parse(record!.error!)).toMatchObject({ attempt: 2, details: { status: 404 } });
  });
});
