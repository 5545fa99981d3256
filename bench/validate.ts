// Validating generated graphs of 10,000, 20,000 and 40,000 nodes, to show the validator is
// linear: each doubling of the graph should about double the time (growth ~2x).
// Next to it, a control: the least any validator over string names must do (index every
// name in a Map, resolve both ends of every exit), timed the same way, so the growth that
// comes from the memory hierarchy is visible apart from the algorithm's.
// Run alone: npm run bench -- validate

import { z } from 'zod';
import type { GraphBuilder, GraphDef } from '../src/index.js';
import { waymarkChainBuilder } from './lib/graphs.js';
import {
  type Contender,
  type ContenderResult,
  check,
  compare,
  pairedRatio,
  progress,
  type Stat,
  settingsFromEnv,
} from './lib/measure.js';
import { emit, type Row } from './lib/report.js';
import { waymarkOrigin, wm } from './lib/waymark.js';

const { END, graph, validate } = wm;

const sizes = [10_000, 20_000, 40_000] as const;
/**
 * Linear means ~x2 per doubling; a quadratic pass would show x4. Hash-table lookups of node
 * names get dearer per operation as the tables outgrow the CPU caches, so the floor below
 * grows faster than x2 too: a doubling passes when it stays under x2.5, or within 1.25x of the
 * floor's own growth.
 */
const slack = 1.25;
const plainLinear = 2.5;

type LoopedState = { counter: number; note: string };
const LoopedSchema = z.object({ counter: z.number(), note: z.string() });

/**
 * A graph that exercises every pass of the validator: blocks of four nodes where the last
 * routes forward or back to the first (a cycle, capped on the first node), the second has an
 * onError exit to the fourth, and every node declares reads and writes.
 */
function loopedDef(size: number): GraphDef {
  let b = graph('looped', { state: LoopedSchema }) as GraphBuilder<LoopedState, string>;
  for (let i = 0; i < size; i++) {
    b = b.node(`n${i}`, async (s) => ({ counter: s.counter + 1 }), {
      reads: ['counter'],
      writes: ['counter'],
      ...(i % 4 === 0 && { visits: 3 }),
      ...(i % 4 === 1 && { onError: `n${i + 2}` }),
    });
  }
  for (let i = 0; i < size; i++) {
    if (i % 4 !== 3) {
      b = b.edge(`n${i}`, `n${i + 1}`);
      continue;
    }
    const forward = i + 1 < size ? `n${i + 1}` : END;
    const back = `n${i - 3}`;
    b = b.route(`n${i}`, (s) => (s.counter > 2 ? forward : back), [forward, back]);
  }
  return b.entry('n0').toDef();
}

const shapes = [
  { shape: 'chain', make: (size: number) => waymarkChainBuilder(size).toDef() },
  { shape: 'looped', make: loopedDef },
] as const;

/** Edges, router targets and onError links: what the validator walks besides the nodes. */
function exitsOf(def: GraphDef): number {
  let exits = def.edges.length;
  for (const route of def.routes) exits += route.targets.length;
  for (const node of def.nodes) if (node.onError !== undefined) exits++;
  return exits;
}

function cellOf(s: Stat): string {
  const n = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));
  return `${n(s.median)} ms (${n(s.min)}-${n(s.max)})`;
}

const settings = settingsFromEnv();
progress(`validate: warm-up ${settings.warmupMs} ms, ${settings.reps} repetitions`);

const cases = shapes.flatMap(({ shape, make }) =>
  sizes.map((size) => {
    const def = make(size);
    check(def.nodes.length === size, `${shape} def has ${def.nodes.length} nodes`);
    return { shape, size, def };
  }),
);

/** The floor: index every node name, resolve both ends of every edge, route and onError. */
function nameIndexFloor(def: GraphDef): number {
  const index = new Map<string, number>();
  for (const node of def.nodes) if (!index.has(node.name)) index.set(node.name, index.size);
  let sum = 0;
  for (const edge of def.edges) sum += (index.get(edge.from) ?? 0) + (index.get(edge.to) ?? 0);
  for (const route of def.routes) {
    sum += index.get(route.from) ?? 0;
    for (const target of route.targets) sum += index.get(target) ?? 0;
  }
  for (const node of def.nodes) if (node.onError !== undefined) sum += index.get(node.onError) ?? 0;
  return sum;
}

const contenders: Contender[] = cases.flatMap(({ shape, size, def }) => {
  const expected = nameIndexFloor(def);
  return [
    {
      name: `validate ${shape} ${size}`,
      units: 1,
      call: async () => {
        const diagnostics = validate(def);
        check(diagnostics.length === 0, `${shape} ${size}: ${diagnostics[0]?.message}`);
        return undefined;
      },
    },
    {
      name: `floor ${shape} ${size}`,
      units: 1,
      call: async () => {
        check(nameIndexFloor(def) === expected, `${shape} ${size}: floor result changed`);
        return undefined;
      },
    },
  ];
});
const results = await compare(contenders, { settings, minWarmUnits: 0, scale: 1 });
const resultOf = (name: string) => results.find((r) => r.name === name)!;

const k = (n: number) => `${n / 1000}k`;
const x = (r: number) => `x${r.toFixed(2)}`;
/** Growth per doubling, paired by repetition (both sizes ran back to back). */
const growthOf = (bySize: readonly ContenderResult[]) =>
  bySize.slice(1).map((big, i) => pairedRatio(big, bySize[i]!).median);
const rows: Row[] = [];
const growth: Record<string, { validate: number[]; floor: number[] }> = {};
for (const { shape } of shapes) {
  const validateBySize: ContenderResult[] = [];
  const floorBySize: ContenderResult[] = [];
  for (const size of sizes) {
    const { def } = cases.find((c) => c.shape === shape && c.size === size)!;
    const v = resultOf(`validate ${shape} ${size}`);
    const f = resultOf(`floor ${shape} ${size}`);
    validateBySize.push(v);
    floorBySize.push(f);
    rows.push({
      measure: `validate ${shape}, ${k(size)} nodes + ${k(exitsOf(def))} exits`,
      unit: 'ms',
      waymark: v.perUnit,
      text: `${cellOf(v.perUnit)}; floor ${cellOf(f.perUnit)}`,
    });
  }
  const v = growthOf(validateBySize);
  const f = growthOf(floorBySize);
  growth[shape] = { validate: v, floor: f };
  const doublings = v.map((_, i) => `${k(sizes[i + 1]!)}/${k(sizes[i]!)}`);
  rows.push({
    measure: `  ${shape}: growth per doubling`,
    unit: '',
    text: doublings.map((d, i) => `${d} ${x(v[i]!)} (floor ${x(f[i]!)})`).join(', '),
    target: `~x2 (quadratic: x4)`,
    met: v.every((r, i) => r < plainLinear || r <= slack * f[i]!),
  });
}

emit({
  scenario: 'validate',
  waymarkOrigin,
  title: 'validate generated graphs',
  rows,
  details: { settings, growth, results },
});
