import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  all,
  any,
  append,
  type CompiledGraph,
  type ErrorValue,
  type GraphBuilder,
  graph,
  initialSnapshot,
  person,
  quorum,
  type RunEvent,
  type Snapshot,
  step,
  sum,
} from '../../src/index.js';
import {
  decodeEvent,
  decodeSnapshot,
  encodeEvent,
  encodeSnapshot,
} from '../../src/runtime/codec/codec.js';

// DESIGN.md 5: "replaying the stored events gives the same snapshot, byte for byte, as the live
// run". For random graphs (chains, routers, fan-outs, maps, waits) driven through `step` in a
// random completion order, with failures, retries and stale events mixed in, the snapshot a
// live run holds after every event equals the one that decoding its stored first snapshot and
// replaying its stored events gives.

const State = z.object({
  log: z.array(z.string()).default([]),
  n: z.number().default(0),
  items: z.array(z.string()).default(['a', 'b', 'c']),
  at: z.date().optional(),
});
type S = z.output<typeof State>;

interface Spec {
  readonly chain: number;
  readonly loop: boolean;
  readonly fanOut: {
    readonly kind: 'fixed' | 'map';
    readonly width: number;
    readonly policy: 'all' | 'any' | 'quorum';
    readonly concurrency: number;
  } | null;
  readonly wait: boolean;
  readonly waitInBranch: boolean;
  readonly retries: boolean;
}

const specs: fc.Arbitrary<Spec> = fc.record({
  chain: fc.integer({ min: 1, max: 3 }),
  loop: fc.boolean(),
  fanOut: fc.option(
    fc.record({
      kind: fc.constantFrom('fixed' as const, 'map' as const),
      width: fc.integer({ min: 1, max: 3 }),
      policy: fc.constantFrom('all' as const, 'any' as const, 'quorum' as const),
      concurrency: fc.integer({ min: 1, max: 3 }),
    }),
    { nil: null },
  ),
  wait: fc.boolean(),
  waitInBranch: fc.boolean(),
  retries: fc.boolean(),
});

// An answer is no state field: it maps into the log, as the driven `answered` events record.
const Ok = z.object({ ok: z.boolean() });
const logAnswer = (a: { ok: boolean }) => ({ log: [`answer ${a.ok}`] });

/** Builds the graph a spec describes; node bodies are never run here, `step` is driven directly. */
function build(spec: Spec): CompiledGraph<S, z.input<typeof State>> {
  const none = () => ({});
  const retry = spec.retries ? { retry: { attempts: 2, backoffMs: 10 } } : {};
  let b: GraphBuilder<S, string, z.input<typeof State>> = graph('random', {
    state: State,
    reducers: { log: append, n: sum },
  });
  const names: string[] = [];
  for (let i = 0; i < spec.chain; i++) {
    b = b.node(`c${i}`, none, { ...retry, ...(spec.loop && { visits: 3 }) });
    if (i > 0) b = b.edge(`c${i - 1}`, `c${i}`);
    names.push(`c${i}`);
  }
  let last = names.at(-1)!;
  if (spec.loop) {
    // Back to the start until enough was done: a cycle with a visit cap, often hit.
    b = b.node('decide', none, { visits: 4 }).edge(last, 'decide');
    b = b.route('decide', (s) => (s.n < 12 ? 'c0' : 'after'), ['c0', 'after']);
    b = b.node('after', none);
    last = 'after';
  }
  const fo = spec.fanOut;
  if (fo !== null) {
    const join =
      fo.policy === 'all' ? all() : fo.policy === 'any' ? any() : quorum(Math.min(2, fo.width));
    b = b.node('spread', none).edge(last, 'spread');
    b = b.node('gather', none, { join, tolerate: 1 });
    if (fo.kind === 'map') {
      b = b.node('item', none, { writes: ['log', 'n'], ...retry });
      b = b
        .node('item-2', none, { writes: ['log', 'n'] })
        .edge('item', 'item-2')
        .edge('item-2', 'gather');
      b = b.map('spread', {
        over: 'items',
        branch: 'item',
        join: 'gather',
        concurrency: fo.concurrency,
      });
    } else {
      const entries: string[] = [];
      for (let i = 0; i < fo.width; i++) {
        const waits = spec.waitInBranch && i === 0;
        b = waits
          ? b.node(`b${i}`, person({ prompt: 'ok?', answer: Ok, update: logAnswer }), {
              writes: ['log', 'n'],
            })
          : b.node(`b${i}`, none, {
              writes: i === 1 ? ['log', 'n', 'at'] : ['log', 'n'],
              ...retry,
            });
        b = b.edge(`b${i}`, 'gather');
        entries.push(`b${i}`);
      }
      b = b.fanOut('spread', entries, 'gather', { concurrency: fo.concurrency });
    }
    last = 'gather';
  }
  if (spec.wait) {
    b = b.node(
      'approve',
      person({
        prompt: (s: S) => `ok after ${s.log.length}?`,
        answer: Ok,
        update: logAnswer,
      }),
    );
    b = b.edge(last, 'approve');
    last = 'approve';
  }
  return b.node('end', none, { terminal: true }).edge(last, 'end').entry('c0').compile();
}

const transient = (id: string, node: string, attempt: number): ErrorValue => ({
  node,
  activation: id,
  attempt,
  code: 'NODE_FAILED',
  class: 'transient',
  message: `${id} failed on attempt ${attempt}`,
});

/**
 * Drives a run through `step` with `choices` deciding, at every turn, which activation in flight
 * ends next and how (completed, failed, or a stale event of an earlier attempt). Returns the
 * events in the order applied and the snapshot after each.
 */
function drive(g: CompiledGraph, choices: readonly number[]) {
  const first = initialSnapshot(g, 'r', g.schema.parse({}) as Snapshot['state'], { maxSteps: 60 });
  const events: RunEvent[] = [];
  const after: Snapshot[] = [];
  let snapshot = first;
  const inFlight = new Map<string, { node: string; attempt: number; waiting: boolean }>();
  const apply = (event: RunEvent) => {
    const result = step(g, snapshot, event);
    events.push(event);
    after.push(result.snapshot);
    snapshot = result.snapshot;
    for (const command of result.commands) {
      if (command.type === 'execute' || command.type === 'wait') {
        const a = command.activation;
        inFlight.set(a.id, { node: a.node, attempt: a.attempt, waiting: command.type === 'wait' });
      } else if (command.type === 'abort') {
        for (const id of command.activations) inFlight.delete(id);
      }
    }
  };
  apply({ type: 'started' });
  let turn = 0;
  let t = 1_000;
  while (snapshot.status === 'running' || snapshot.status === 'waiting') {
    const open = [...inFlight.entries()];
    if (open.length === 0 || turn >= 200) break;
    const choice = choices[turn % Math.max(1, choices.length)] ?? 0;
    turn++;
    t += 7;
    const [id, a] = open[choice % open.length]!;
    const how = Math.floor(choice / open.length) % 7;
    if (a.waiting) {
      inFlight.delete(id);
      apply({
        type: 'answered',
        activation: id,
        answer: { ok: true },
        update: { log: [`answer ${id}`] },
      });
    } else if (how === 0) {
      inFlight.delete(id);
      apply({
        type: 'failed',
        activation: id,
        attempt: a.attempt,
        error: transient(id, a.node, a.attempt),
        at: t,
      });
    } else if (how === 1 && a.attempt > 1) {
      // A late event of the attempt before: it must change nothing, live and on replay.
      apply({
        type: 'completed',
        activation: id,
        attempt: a.attempt - 1,
        update: { log: ['stale'] },
      });
    } else {
      inFlight.delete(id);
      const update: Record<string, unknown> = { log: [id], n: 1 };
      if (a.node === 'b1') update.at = new Date(t);
      apply({
        type: 'completed',
        activation: id,
        attempt: a.attempt,
        update: Object.freeze(update),
      });
    }
  }
  return { first, events, after };
}

describe('a live run and the replay of its stored events agree, byte for byte', () => {
  it('for random graphs and random completion orders', () => {
    fc.assert(
      fc.property(
        specs,
        fc.array(fc.nat({ max: 1_000 }), { minLength: 1, maxLength: 80 }),
        (spec, choices) => {
          const g = build(spec) as CompiledGraph;
          const { first, events, after } = drive(g, choices);
          // What a store holds: the first snapshot and every event, as text.
          let replayed = decodeSnapshot(g, encodeSnapshot(first, g), 'r');
          events.forEach((event, i) => {
            const stored = decodeEvent(encodeEvent(event, g), 'r', i + 1);
            replayed = step(g, replayed, stored).snapshot;
            expect(encodeSnapshot(replayed, g)).toBe(encodeSnapshot(after[i]!, g));
          });
          // And a snapshot written mid-run loads as the state it was.
          const middle = after[Math.floor(after.length / 2)]!;
          expect(encodeSnapshot(decodeSnapshot(g, encodeSnapshot(middle, g), 'r'), g)).toBe(
            encodeSnapshot(middle, g),
          );
        },
      ),
      { numRuns: Number(process.env.WAYMARK_PROPERTY_RUNS ?? 300), seed: 20261201 },
    );
  });

  it('covers what it claims: some runs fan out, wait, retry, hit a cap, and finish', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(
        specs,
        fc.array(fc.nat({ max: 1_000 }), { minLength: 1, maxLength: 80 }),
        (spec, choices) => {
          const g = build(spec) as CompiledGraph;
          const { events, after } = drive(g, choices);
          const final = after.at(-1)!;
          seen.add(final.status);
          if (events.some((e) => e.type === 'answered')) seen.add('answered');
          if (events.some((e) => e.type === 'failed')) seen.add('failed-attempt');
          if (final.errors.some((e) => e.code === 'VISIT_CAP')) seen.add('cap');
          if (after.some((s) => Object.keys(s.fanOuts).length > 0)) seen.add('fan-out');
        },
      ),
      { numRuns: 300, seed: 20261201 },
    );
    expect([...seen].sort()).toEqual(
      expect.arrayContaining([
        'answered',
        'cap',
        'failed',
        'failed-attempt',
        'fan-out',
        'succeeded',
      ]),
    );
  });
});
