import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { END, graph, initialSnapshot, type Snapshot, step } from '../../src/index.js';

const State = z.object({ n: z.number() });

const bodies = { plan: 0, verify: 0 };
const g = graph('loop', { state: State })
  .node(
    'plan',
    () => {
      bodies.plan++;
    },
    { visits: 2, retry: { attempts: 2, backoffMs: 50 } },
  )
  .node('verify', () => {
    bodies.verify++;
  })
  .edge('plan', 'verify')
  .route('verify', (s) => (s.n >= 2 ? END : 'plan'), ['plan', END])
  .entry('plan')
  .compile();

const start = (): Snapshot => initialSnapshot(g, 'r', Object.freeze({ n: 0 }), { maxSteps: 100 });

describe('the pure transition function', () => {
  it('turns a start into one execute command for the entry, and runs no node body itself', () => {
    const { snapshot, commands } = step(g, start(), { type: 'started' });
    expect(commands).toEqual([
      {
        type: 'execute',
        activation: { id: 'plan:1', node: 'plan', attempt: 1, parent: null },
      },
    ]);
    expect(snapshot).toMatchObject({ status: 'running', visits: { plan: 1 }, steps: 0 });
    expect(bodies).toEqual({ plan: 0, verify: 0 });
  });

  it('applies a completion, routes, and schedules the next activation with its parent', () => {
    const a = step(g, start(), { type: 'started' }).snapshot;
    const b = step(g, a, { type: 'completed', activation: 'plan:1', update: { n: 1 } });
    expect(b.snapshot.state).toEqual({ n: 1 });
    expect(b.outcome).toMatchObject({ status: 'succeeded', activation: { id: 'plan:1' } });
    expect(b.commands).toEqual([
      {
        type: 'execute',
        activation: { id: 'verify:1', node: 'verify', attempt: 1, parent: 'plan:1' },
      },
    ]);
    const c = step(g, b.snapshot, { type: 'completed', activation: 'verify:1', update: undefined });
    expect(c.commands.map((x) => x.type === 'execute' && x.activation.id)).toEqual(['plan:2']);
  });

  it('never mutates the snapshot it is given', () => {
    const a = step(g, start(), { type: 'started' }).snapshot;
    const copy = structuredClone(a);
    step(g, a, { type: 'completed', activation: 'plan:1', update: { n: 5 } });
    expect(a).toEqual(copy);
  });

  it('asks for a retry not before the backoff delay after the failure, keeping the activation id', () => {
    const a = step(g, start(), { type: 'started' }).snapshot;
    const error = {
      node: 'plan',
      activation: 'plan:1',
      attempt: 1,
      code: 'NODE_FAILED',
      class: 'transient',
      message: 'x',
    } as const;
    const b = step(g, a, { type: 'failed', activation: 'plan:1', attempt: 1, error, at: 5_000 });
    // The backoff is a time in the snapshot, not a sleep: whoever drives the run next sees it.
    const retry = { id: 'plan:1', node: 'plan', attempt: 2, parent: null, notBefore: 5_050 };
    expect(b.commands).toEqual([{ type: 'execute', activation: retry }]);
    expect(b.snapshot.pending).toEqual([retry]);
    expect(b.outcome).toMatchObject({ status: 'failed', retrying: true });
    expect(b.snapshot.errors).toEqual([]);
  });

  it('ignores an event about an activation that is not pending (a late result)', () => {
    const a = step(g, start(), { type: 'started' }).snapshot;
    const b = step(g, a, { type: 'completed', activation: 'verify:7', update: { n: 9 } });
    expect(b.snapshot.state).toEqual({ n: 0 });
    expect(b.commands).toEqual([]);
  });

  it('finishes succeeded when the last path reaches END, and ignores everything after', () => {
    let s = step(g, start(), { type: 'started' }).snapshot;
    s = step(g, s, { type: 'completed', activation: 'plan:1', update: { n: 2 } }).snapshot;
    s = step(g, s, { type: 'completed', activation: 'verify:1', update: undefined }).snapshot;
    expect(s.status).toBe('succeeded');
    expect(s.pending).toEqual([]);
    const after = step(g, s, { type: 'cancelled', reason: 'too late' });
    expect(after.snapshot).toBe(s);
  });

  it('keeps the interrupted activation pending when a run is cancelled, so a resume can run it', () => {
    const a = step(g, start(), { type: 'started' }).snapshot;
    const b = step(g, a, { type: 'cancelled', reason: 'stop' }).snapshot;
    expect(b.status).toBe('cancelled');
    expect(b.pending.map((x) => x.id)).toEqual(['plan:1']);
  });
});
