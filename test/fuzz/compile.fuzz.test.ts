import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { diagnosticCodes } from '../../src/graph/diagnostic.js';
import {
  all,
  any,
  append,
  END,
  errorCodes,
  type GraphBuilder,
  graph,
  isWaymarkError,
  MemoryStore,
  person,
  quorum,
  run,
} from '../../src/index.js';
import { fuzzParameters, fuzzTimeout } from './settings.js';

// Random graph declarations, valid and not: nodes, edges, routes, fan-outs, maps, joins,
// subgraphs, caps and options, with names that collide, are reserved or are not names at all.
// Whatever the declaration, the builder throws a coded WaymarkError or compile() returns a graph
// that runs to a status, or throws GRAPH_INVALID whose every diagnostic carries a known code.
// Never another exception: a TypeError from inside compile() is a bug this suite is here to find.

const State = z.object({
  items: z.array(z.string()).default(['a', 'b']),
  notes: z.array(z.string()).default([]),
  n: z.number().default(0),
  approved: z.boolean().default(false),
});

const child = graph('fuzz-child', { state: z.object({ notes: z.array(z.string()).default([]) }) })
  .node('inner', () => ({ notes: ['inner'] }), { terminal: true })
  .entry('inner')
  .compile();

const name = fc.constantFrom(
  'a',
  'b',
  'c',
  'd',
  'e',
  'f',
  END,
  '',
  'two words',
  '__proto__',
  'constructor',
);
const field = fc.constantFrom('items', 'notes', 'n', 'approved', 'missing', '');
const smallNumber = fc.oneof(
  fc.integer({ min: -2, max: 6 }),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, 1.5, 0),
);
const join = fc.oneof(
  fc.constant(all()),
  fc.constant(any()),
  smallNumber.map((k) => {
    try {
      return quorum(k);
    } catch {
      return all();
    }
  }),
);
const nodeOptions = fc.record(
  {
    visits: smallNumber,
    retry: fc.record({ attempts: smallNumber, backoffMs: smallNumber }),
    timeoutMs: smallNumber,
    onError: name,
    reads: fc.array(field, { maxLength: 3 }),
    writes: fc.array(field, { maxLength: 3 }),
    terminal: fc.boolean(),
    join,
    kind: fc.constantFrom('code', 'effect', 'model', 'bogus'),
    version: smallNumber,
  },
  { requiredKeys: [] },
);

/** One builder call. */
const operation = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ op: fc.constant('node' as const), name, options: nodeOptions }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('person' as const), name }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('subgraph' as const),
      name,
      options: fc.record(
        { visits: smallNumber, writes: fc.array(field, { maxLength: 2 }) },
        { requiredKeys: [] },
      ),
    }),
  },
  { weight: 5, arbitrary: fc.record({ op: fc.constant('edge' as const), from: name, to: name }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('route' as const),
      from: name,
      targets: fc.array(name, { maxLength: 3 }),
      pick: fc.nat(5),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('fanOut' as const),
      from: name,
      branches: fc.array(name, { maxLength: 3 }),
      join: name,
      concurrency: fc.option(smallNumber, { nil: undefined }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('map' as const),
      from: name,
      over: field,
      branch: name,
      join: name,
      concurrency: fc.option(smallNumber, { nil: undefined }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('entry' as const), name }) },
);

type Operation = typeof operation extends fc.Arbitrary<infer T> ? T : never;

/**
 * A declaration that is valid as drawn (a chain, with a fan-out, a map, a capped loop or a person
 * step along it), then up to three wild operations inserted anywhere: most land on the edge of
 * validity, where a compiler's own exceptions hide.
 */
/** An operation built by hand: the skeletons below use names the wild generator does not. */
const op = (o: object) => o as unknown as Operation;

const declaration: fc.Arbitrary<Operation[]> = fc
  .record({
    length: fc.integer({ min: 1, max: 6 }),
    shape: fc.constantFrom('chain', 'fanOut', 'map', 'loop', 'person', 'subgraph'),
    at: fc.nat(5),
    options: fc.array(fc.oneof(fc.constant({}), nodeOptions), { minLength: 6, maxLength: 6 }),
    mutations: fc.array(fc.tuple(fc.nat(40), operation), { maxLength: 3 }),
  })
  .map(({ length, shape, at, options, mutations }) => {
    const n = (i: number) => `n${i}`;
    const ops: Operation[] = [];
    const node = (name: string, o: object = {}) => ops.push(op({ op: 'node', name, options: o }));
    const i = at % length;
    for (let k = 0; k < length; k++) {
      if (k === i && shape === 'person') ops.push(op({ op: 'person', name: n(k) }));
      else if (k === i && shape === 'subgraph')
        ops.push({ op: 'subgraph', name: n(k), options: {} } as Operation);
      else node(n(k), k === i ? options[k]! : {});
    }
    for (let k = 1; k < length; k++) {
      if (shape === 'fanOut' && k === i + 1) continue;
      if (shape === 'map' && k === i + 1) continue;
      ops.push(op({ op: 'edge', from: n(k - 1), to: n(k) }));
    }
    if (shape === 'fanOut' || shape === 'map') {
      node('b0', { writes: ['notes'] });
      node('b1', { writes: ['notes'] });
      node('j', { join: all() });
      if (shape === 'fanOut')
        ops.push(op({ op: 'fanOut', from: n(i), branches: ['b0', 'b1'], join: 'j' }));
      else ops.push(op({ op: 'map', from: n(i), over: 'items', branch: 'b0', join: 'j' }));
      ops.push(op({ op: 'edge', from: 'b0', to: 'j' }));
      ops.push(op({ op: 'edge', from: 'b1', to: 'j' }));
      ops.push(op({ op: 'edge', from: 'j', to: i + 1 < length ? n(i + 1) : END }));
    }
    if (shape === 'loop') {
      node('again', { visits: 3 });
      ops.push(op({ op: 'route', from: 'again', targets: ['again', END], pick: at % 2 }));
      ops.push(op({ op: 'edge', from: n(length - 1), to: 'again' }));
    } else ops.push(op({ op: 'edge', from: n(length - 1), to: END }));
    ops.push(op({ op: 'entry', name: n(0) }));
    for (const [where, mutation] of mutations) ops.splice(where % (ops.length + 1), 0, mutation);
    return ops;
  });
// The builder's types check names at compile time; the fuzz calls it as plain JavaScript does.
type Loose = {
  [K in 'node' | 'subgraph' | 'edge' | 'route' | 'fanOut' | 'map' | 'entry']: (
    ...args: unknown[]
  ) => Loose;
} & { compile(): ReturnType<GraphBuilder['compile']> };

function declare(operations: readonly Operation[]): Loose {
  let b = graph('fuzz', { state: State, reducers: { notes: append } }) as unknown as Loose;
  for (const o of operations) {
    switch (o.op) {
      case 'node':
        b = b.node(o.name, (s: { n: number }) => ({ n: s.n + 1, notes: [o.name] }), o.options);
        break;
      case 'person':
        b = b.node(o.name, person({ prompt: 'ok?', answer: z.object({ approved: z.boolean() }) }));
        break;
      case 'subgraph':
        b = b.subgraph(o.name, child, o.options);
        break;
      case 'edge':
        b = b.edge(o.from, o.to);
        break;
      case 'route':
        // A router may also return a target it did not declare: a coded error of the run.
        b = b.route(o.from, () => o.targets[o.pick] ?? 'undeclared', o.targets);
        break;
      case 'fanOut':
        b = b.fanOut(
          o.from,
          o.branches,
          o.join,
          o.concurrency === undefined ? {} : { concurrency: o.concurrency },
        );
        break;
      case 'map':
        b = b.map(o.from, {
          over: o.over,
          branch: o.branch,
          join: o.join,
          ...(o.concurrency !== undefined && { concurrency: o.concurrency }),
        });
        break;
      case 'entry':
        b = b.entry(o.name);
        break;
    }
  }
  return b;
}

const codes = new Set<string>(errorCodes);
/** How many declarations compiled: the suite must reach accepted graphs, not only refusals. */
const reached = { compiled: 0 };
const diagnostics = new Set<string>(diagnosticCodes);

/** What went wrong with one declaration, or undefined: the property's verdict, with the reason. */
async function outcome(operations: readonly Operation[]): Promise<string | undefined> {
  let builder: Loose;
  try {
    builder = declare(operations);
  } catch (error) {
    return isWaymarkError(error) && codes.has(error.code)
      ? undefined
      : `the builder threw ${String(error)}`;
  }
  let compiled: ReturnType<Loose['compile']>;
  try {
    compiled = builder.compile();
  } catch (error) {
    if (!isWaymarkError(error))
      return `compile() threw ${String((error as Error)?.stack ?? error)}`;
    if (error.code !== 'GRAPH_INVALID') return `compile() threw ${error.code}, not GRAPH_INVALID`;
    const list = error.details as { code?: unknown }[] | undefined;
    if (!Array.isArray(list) || list.length === 0) return 'GRAPH_INVALID without diagnostics';
    const bad = list.filter((d) => typeof d.code !== 'string' || !diagnostics.has(d.code));
    return bad.length === 0
      ? undefined
      : `diagnostics without a known code: ${JSON.stringify(bad)}`;
  }
  // A graph compile() accepts runs: to a status, or to a coded refusal, never a raw exception.
  reached.compiled++;
  try {
    const result = await run(compiled, {}, { store: new MemoryStore(), maxSteps: 50 });
    return ['succeeded', 'failed', 'waiting', 'cancelled', 'timed_out'].includes(result.status)
      ? undefined
      : `the run ended ${result.status}`;
  } catch (error) {
    return isWaymarkError(error) && codes.has(error.code)
      ? undefined
      : `the run threw ${String((error as Error)?.stack ?? error)}`;
  }
}

describe('fuzzed graph declarations', () => {
  it(
    'compile() returns a graph that runs, or throws GRAPH_INVALID whose diagnostics all carry codes; nothing else',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(declaration, fc.array(operation, { maxLength: 14 })),
          async (operations) => {
            const wrong = await outcome(operations);
            expect(wrong).toBeUndefined();
          },
        ),
        fuzzParameters(300),
      );
      expect(reached.compiled).toBeGreaterThan(0);
      console.log(`fuzzed declarations: ${reached.compiled} compiled and ran`);
    },
    fuzzTimeout(60_000),
  );

  it(
    'valid chains of any length compile and run: the generator reaches graphs that are accepted',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 1, max: 40 }), async (length) => {
          let b = graph('chain', { state: State }) as unknown as Loose;
          for (let i = 0; i < length; i++) {
            b = b.node(`n${i}`, () => ({}));
            if (i > 0) b = b.edge(`n${i - 1}`, `n${i}`);
          }
          const compiled = b
            .edge(`n${length - 1}`, END)
            .entry('n0')
            .compile();
          const result = await run(compiled, {}, { store: new MemoryStore() });
          expect(result.status).toBe('succeeded');
        }),
        fuzzParameters(20),
      );
    },
    fuzzTimeout(60_000),
  );
});
