import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  append,
  END,
  graph,
  loadTrace,
  MemoryStore,
  permanentError,
  run,
  WaymarkError,
} from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';
import { manualClock } from '../support/clock.js';

const State = z.object({
  draft: z.string().default(''),
  note: z.string().default(''),
  log: z.array(z.string()).default([]),
});

describe('errors are values', () => {
  it('routes a verify node that throws to publish through onError, and publish sees the error', async () => {
    const g = graph('publish-anyway', { state: State, reducers: { log: append } })
      .node('draft', () => ({ draft: 'tea predates coffee', log: ['draft'] }))
      .node(
        'verify',
        () => {
          throw new Error('source unreachable');
        },
        { onError: 'publish' },
      )
      .node(
        'publish',
        (_s, ctx) => ({
          note: ctx.error
            ? `published unverified: ${ctx.error.node} ${ctx.error.code} ${ctx.error.message}`
            : 'verified',
          log: [`publish saw ${ctx.errors.length} error(s)`],
        }),
        { terminal: true },
      )
      .edge('draft', 'verify')
      .edge('verify', 'publish')
      .entry('draft')
      .compile();

    const result = await run(g, {});

    expect(result.status).toBe('succeeded');
    expect(result.trace.path).toEqual(['draft', 'verify', 'publish']);
    expect(result.state.note).toBe('published unverified: verify NODE_FAILED source unreachable');
    expect(result.state.log).toEqual(['draft', 'publish saw 1 error(s)']);
    expect(result.errors).toEqual([
      {
        node: 'verify',
        activation: 'verify:1',
        attempt: 1,
        code: 'NODE_FAILED',
        class: 'transient',
        message: 'source unreachable',
        // Where it was thrown: the node's own line, so a failure can be found from the record.
        stack: expect.stringContaining('errors.test.ts'),
      },
    ]);
  });

  it('keeps what a node threw: its stack and the cause chain it wrapped', async () => {
    const g = graph('g', { state: State })
      .node('fetch', () => {
        const low = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), {
          code: 'ECONNREFUSED',
        });
        throw new Error('the changelog could not be fetched', { cause: low });
      })
      .edge('fetch', END)
      .entry('fetch')
      .compile();

    const store = new MemoryStore();
    const result = await run(g, {}, { store, runId: 'r' });

    expect(result.status).toBe('failed');
    if (result.status !== 'failed') return;
    expect(result.error.stack).toMatch(/^Error: the changelog could not be fetched\n\s+at /);
    expect(result.error.cause).toMatchObject({
      message: 'connect ECONNREFUSED 127.0.0.1:9',
      code: 'ECONNREFUSED',
      stack: expect.stringContaining('errors.test.ts'),
    });
    // Read back later, from the history alone, the attempt keeps the same provenance.
    const [attempt] = (await loadTrace(store, 'r')).entries;
    expect(attempt?.error).toEqual({
      code: 'NODE_FAILED',
      class: 'transient',
      message: 'the changelog could not be fetched',
      stack: result.error.stack,
      cause: result.error.cause,
    });
  });

  it("keeps a stack's own frames and drops the engine's frames that called the node", async () => {
    const g = graph('g', { state: State })
      .node('fetch', async (_s, ctx) => {
        // An effect that throws: waymark's frames above the node's code are part of its story.
        await ctx.effect('call', () => {
          throw new Error('refused by the API');
        });
        return {};
      })
      .edge('fetch', END)
      .entry('fetch')
      .compile();

    const result = await run(g, {});

    expect(result.status).toBe('failed');
    if (result.status !== 'failed') return;
    const frames = (result.error.stack ?? '').split('\n').slice(1);
    expect(frames.some((f) => f.includes('errors.test.ts'))).toBe(true);
    // The last frame is the test's node, not the executor or the drive that called it.
    expect(frames.at(-1)).toContain('errors.test.ts');
    expect(result.error.stack).not.toMatch(/runtime[/\\](engine|local|core)[/\\]/);
  });

  it("keeps nothing of what ran the node: every attempt's stack ends at the node", async () => {
    const g = graph('g', { state: State })
      .node(
        'parse',
        function parseNode() {
          throw new Error('not JSON');
        },
        { retry: { attempts: 2, backoffMs: 1 } },
      )
      .edge('parse', END)
      .entry('parse')
      .compile();
    async function startTheRun() {
      // On a store, the first attempt starts after a commit: Node's task queue is below it.
      return run(g, {}, { store: new SqliteStore({ path: ':memory:' }) });
    }

    const result = await startTheRun();

    expect(result.trace.entries.map((e) => e.status)).toEqual(['failed', 'failed']);
    for (const entry of result.trace.entries) {
      const frames = (entry.error?.stack ?? '').split('\n').slice(1);
      expect(frames).toEqual([expect.stringMatching(/parseNode .*errors\.test\.ts/)]);
    }
  });

  it('ends the run failed, with the error and the state so far, when the node has no onError', async () => {
    const g = graph('g', { state: State })
      .node('draft', () => ({ draft: 'kept' }))
      .node('verify', () => {
        throw permanentError('claim contradicts the changelog');
      })
      .edge('draft', 'verify')
      .edge('verify', END)
      .entry('draft')
      .compile();

    const result = await run(g, {});

    expect(result.status).toBe('failed');
    if (result.status !== 'failed') return;
    expect(result.error).toMatchObject({
      node: 'verify',
      code: 'NODE_FAILED',
      class: 'permanent',
      attempt: 1,
    });
    expect(result.error.message).toBe('claim contradicts the changelog');
    expect(result.state.draft).toBe('kept');
  });

  it('refuses an update with an unknown field, a wrong type or an undeclared write, as a permanent error value', async () => {
    const cases: Array<[string, () => unknown, string]> = [
      ['unknown field', () => ({ title: 'x' }), 'UPDATE_INVALID'],
      ['wrong type', () => ({ draft: 42 }), 'UPDATE_INVALID'],
      ['not an object', () => 'done', 'UPDATE_INVALID'],
      ['undeclared write', () => ({ note: 'n' }), 'WRITE_DENIED'],
    ];
    for (const [label, body, code] of cases) {
      let attempts = 0;
      const g = graph('g', { state: State })
        .node(
          'write',
          () => {
            attempts++;
            return body() as never;
          },
          { writes: ['draft'], retry: { attempts: 3 } },
        )
        .edge('write', END)
        .entry('write')
        .compile();
      const result = await run(g, { draft: 'before' });
      expect(result.status === 'failed' && result.error, label).toMatchObject({
        code,
        class: 'permanent',
      });
      expect(attempts, `${label}: a permanent error is not retried`).toBe(1);
      expect(result.state.draft, label).toBe('before');
    }
  });
});

describe('retries', () => {
  it('retries with exponential backoff and the trace shows every attempt', async () => {
    const clock = manualClock();
    let calls = 0;
    const g = graph('flaky', { state: State })
      .node(
        'search',
        () => {
          calls++;
          if (calls < 3) throw new Error(`503 on call ${calls}`);
          return { draft: 'found' };
        },
        { retry: { attempts: 4, backoffMs: 100, factor: 3, maxBackoffMs: 250 } },
      )
      .edge('search', END)
      .entry('search')
      .compile();

    const result = await run(g, {}, { clock });

    expect(result.status).toBe('succeeded');
    expect(clock.sleeps).toEqual([100, 250]);
    expect(
      result.trace.entries.map((e) => [
        e.activation,
        e.attempt,
        e.status,
        e.retried,
        e.error?.message,
      ]),
    ).toEqual([
      ['search:1', 1, 'failed', true, '503 on call 1'],
      ['search:1', 2, 'failed', true, '503 on call 2'],
      ['search:1', 3, 'succeeded', false, undefined],
    ]);
    expect(result.trace.path).toEqual(['search']);
    expect(result.errors).toEqual([]);
  });

  it('records the last attempt as the error once the attempts are spent', async () => {
    const g = graph('g', { state: State })
      .node(
        'search',
        (_s, ctx) => {
          throw new Error(`attempt ${ctx.attempt}`);
        },
        { retry: { attempts: 2 } },
      )
      .edge('search', END)
      .entry('search')
      .compile();
    const result = await run(g, {}, { clock: manualClock() });
    expect(result.status === 'failed' && result.error).toMatchObject({
      attempt: 2,
      message: 'attempt 2',
    });
    expect(result.trace.entries).toHaveLength(2);
  });

  it('retries only the error classes listed in retryOn', async () => {
    let calls = 0;
    const g = graph('g', { state: State })
      .node(
        'fetch',
        () => {
          calls++;
          throw new Error('flaky');
        },
        { retry: { attempts: 5, retryOn: ['timeout'] } },
      )
      .edge('fetch', END)
      .entry('fetch')
      .compile();
    await run(g, {}, { clock: manualClock() });
    expect(calls).toBe(1);
  });

  it('retries only what its predicate says is worth it: a 503 yes, a 400 no', async () => {
    const statuses = [503, 503, 400, 200];
    const seen: number[] = [];
    const g = graph('http', { state: State })
      .node(
        'call',
        () => {
          const status = statuses[seen.length]!;
          seen.push(status);
          if (status !== 200)
            throw new WaymarkError('NODE_FAILED', `HTTP ${status}`, { details: { status } });
          return { draft: 'ok' };
        },
        {
          retry: {
            attempts: 5,
            when: (error) => (error.details as { status?: number } | undefined)?.status !== 400,
          },
        },
      )
      .edge('call', END)
      .entry('call')
      .compile();

    const result = await run(g, {}, { clock: manualClock() });

    expect(seen).toEqual([503, 503, 400]);
    expect(result.status === 'failed' && result.error).toMatchObject({
      attempt: 3,
      message: 'HTTP 400',
    });
    expect(result.trace.entries.map((e) => e.retried)).toEqual([true, true, false]);
  });

  it('refuses a retry predicate that is not a function when the graph compiles', () => {
    expect(() =>
      graph('g', { state: State })
        .node('call', () => ({}), { retry: { attempts: 2, when: 'yes' as never } })
        .edge('call', END)
        .entry('call')
        .compile(),
    ).toThrow(/retry\.when/);
  });

  it('does not retry a person node: asking again is a new question, not an attempt', async () => {
    let calls = 0;
    const g = graph('g', { state: State })
      .node(
        'approve',
        () => {
          calls++;
          throw new Error('no answer');
        },
        { kind: 'person', retry: { attempts: 3 } },
      )
      .edge('approve', END)
      .entry('approve')
      .compile();
    await run(g, {}, { clock: manualClock() });
    expect(calls).toBe(1);
  });
});

describe('timeouts and cancellation', () => {
  it('aborts ctx.signal at the node timeout and records a timeout error value', async () => {
    let sawAbort = false;
    const g = graph('slow', { state: State })
      .node(
        'fetch',
        (_s, ctx) =>
          new Promise<{ draft: string }>((resolve) => {
            ctx.signal.addEventListener('abort', () => {
              sawAbort = true;
              resolve({ draft: 'too late' });
            });
          }),
        { timeoutMs: 20 },
      )
      .edge('fetch', END)
      .entry('fetch')
      .compile();

    const result = await run(g, {});

    expect(sawAbort).toBe(true);
    expect(result.status === 'failed' && result.error).toMatchObject({
      code: 'NODE_TIMEOUT',
      class: 'timeout',
    });
    expect(result.state.draft).toBe('');
  });

  it('stops counting a node that ignores its signal at the timeout, and discards its late result', async () => {
    let finishLate: (() => void) | undefined;
    const late = new Promise<void>((resolve) => {
      finishLate = resolve;
    });
    let attempts = 0;
    const g = graph('stubborn', { state: State, reducers: { log: append } })
      .node(
        'fetch',
        async (_s, ctx) => {
          attempts++;
          if (ctx.attempt === 1) {
            await late; // ignores ctx.signal entirely
            return { draft: 'late result', log: ['late'] };
          }
          return { draft: 'second attempt', log: ['second'] };
        },
        { timeoutMs: 20, retry: { attempts: 2 } },
      )
      .edge('fetch', END)
      .entry('fetch')
      .compile();

    const result = await run(g, {});
    finishLate?.();
    await new Promise((r) => setTimeout(r, 5));

    expect(attempts).toBe(2);
    expect(result.status).toBe('succeeded');
    expect(result.state).toMatchObject({ draft: 'second attempt', log: ['second'] });
    expect(result.trace.entries.map((e) => [e.attempt, e.status, e.error?.code])).toEqual([
      [1, 'failed', 'NODE_TIMEOUT'],
      [2, 'succeeded', undefined],
    ]);
  });

  it('cancels a run through an AbortSignal: status cancelled, the running node sees its signal abort', async () => {
    const controller = new AbortController();
    let nodeSawAbort = false;
    let afterRan = false;
    const g = graph('cancel', { state: State })
      .node(
        'wait',
        (_s, ctx) =>
          new Promise<undefined>((resolve) => {
            ctx.signal.addEventListener('abort', () => {
              nodeSawAbort = true;
              resolve(undefined);
            });
            setTimeout(() => controller.abort(new Error('user pressed stop')), 5);
          }),
      )
      .node('after', () => {
        afterRan = true;
      })
      .edge('wait', 'after')
      .edge('after', END)
      .entry('wait')
      .compile();

    const result = await run(g, {}, { signal: controller.signal });

    expect(result.status).toBe('cancelled');
    if (result.status !== 'cancelled') return;
    expect(result.error).toMatchObject({ code: 'RUN_CANCELLED', node: 'wait' });
    expect(result.error.message).toContain('user pressed stop');
    expect(nodeSawAbort).toBe(true);
    expect(afterRan).toBe(false);
    expect(result.trace.entries.map((e) => [e.node, e.status])).toEqual([['wait', 'cancelled']]);
  });

  it('does not start a run whose signal is already aborted', async () => {
    let ran = false;
    const g = graph('g', { state: State })
      .node('a', () => {
        ran = true;
      })
      .edge('a', END)
      .entry('a')
      .compile();
    const result = await run(g, {}, { signal: AbortSignal.abort('never mind') });
    expect(result.status).toBe('cancelled');
    // The entry is scheduled and cancelled in the same turn, before it can start.
    expect(ran).toBe(false);
  });

  it('ends a run that passes its time limit as timed_out', async () => {
    const g = graph('g', { state: State })
      .node(
        'slow',
        (_s, ctx) =>
          new Promise<undefined>((resolve) =>
            ctx.signal.addEventListener('abort', () => resolve(undefined)),
          ),
      )
      .edge('slow', END)
      .entry('slow')
      .compile();
    const result = await run(g, {}, { timeoutMs: 10 });
    expect(result.status).toBe('timed_out');
    expect(result.status === 'timed_out' && result.error).toMatchObject({
      code: 'RUN_TIMEOUT',
      class: 'timeout',
    });
  });
});
