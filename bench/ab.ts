// Two builds of waymark side by side in one process: the in-memory chain and loop and the SQLite
// chain per node step,
// the builds alternating round by round after a warm-up by time, so a burst of load on a shared
// machine falls on both alike. For "no regression beyond noise" against an earlier commit.
//
//   node --import tsx bench/ab.ts <git-rev> [rounds]     e.g. node --import tsx bench/ab.ts 4038396
//
// Prints, per graph, each build's median per node step and the paired ratio (new / old).

import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import type * as Waymark from '../src/index.js';
import type * as WaymarkSqlite from '../src/sqlite.js';
import { buildWaymark } from './lib/build-waymark.js';
import { tempDir } from './lib/sqlite.js';

const ref = process.argv[2];
const rounds = Number(process.argv[3] ?? 20);
if (ref === undefined || !Number.isInteger(rounds) || rounds < 1) {
  process.stderr.write('usage: node --import tsx bench/ab.ts <git-rev> [rounds]\n');
  process.exit(2);
}

process.stderr.write(`building the working tree and ${ref} ...\n`);
interface Build {
  readonly wm: typeof Waymark;
  readonly sqlite: typeof WaymarkSqlite;
}
const load = async (built: { entry: string }): Promise<Build> => ({
  wm: await import(pathToFileURL(built.entry).href),
  sqlite: await import(pathToFileURL(join(dirname(built.entry), 'sqlite.js')).href),
});
const builds = {
  new: await load(buildWaymark(undefined, 'ab-new')),
  old: await load(buildWaymark(ref, 'ab-old')),
};

type Graphs = Record<string, { steps: number; call: () => Promise<unknown> }>;

function graphsOf({ wm, sqlite }: Build, name: string): Graphs {
  const store = new sqlite.SqliteStore(join(tempDir(`ab-${name}`), 'ab.db'));
  const State = z.object({ counter: z.number() });
  let chain = wm.graph('chain', { state: State }) as Waymark.GraphBuilder<
    { counter: number },
    string
  >;
  for (let i = 0; i < 100; i++)
    chain = chain.node(`n${i}`, async (s) => ({ counter: s.counter + 1 }));
  for (let i = 0; i < 99; i++) chain = chain.edge(`n${i}`, `n${i + 1}`);
  const chain100 = chain.edge('n99', wm.END).entry('n0').compile();
  const loop = wm
    .graph('loop', { state: State })
    .node('a', async (s) => ({ counter: s.counter + 1 }), { visits: 1_000 })
    .node('b', async () => ({}), { visits: 1_000 })
    .edge('a', 'b')
    .route('b', (s) => (s.counter < 1_000 ? 'a' : wm.END), ['a', wm.END])
    .entry('a')
    .compile();
  return {
    'chain 100': { steps: 100, call: () => wm.run(chain100, { counter: 0 }, { maxSteps: 10_000 }) },
    'loop 2x1,000': {
      steps: 2_000,
      call: () => wm.run(loop, { counter: 0 }, { maxSteps: 10_000 }),
    },
    'SQLite chain 100': {
      steps: 100,
      call: () => wm.run(chain100, { counter: 0 }, { maxSteps: 10_000, store }),
    },
  };
}

const graphs = { new: graphsOf(builds.new, 'new'), old: graphsOf(builds.old, 'old') };

/** Microseconds per node step of `ms` worth of calls. */
async function slice(g: Graphs[string], ms: number): Promise<number> {
  let steps = 0;
  const started = performance.now();
  while (performance.now() - started < ms) {
    await g.call();
    steps += g.steps;
  }
  return ((performance.now() - started) * 1000) / steps;
}

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

for (const name of Object.keys(graphs.new)) {
  // Warm-up by time, both builds.
  const until = performance.now() + 3_000;
  while (performance.now() < until) {
    await slice(graphs.new[name]!, 100);
    await slice(graphs.old[name]!, 100);
  }
  const per = { new: [] as number[], old: [] as number[] };
  const ratios: number[] = [];
  for (let i = 0; i < rounds; i++) {
    // Alternate which build goes first, so neither always follows the other's garbage.
    const order = i % 2 === 0 ? (['new', 'old'] as const) : (['old', 'new'] as const);
    const got: Record<string, number> = {};
    for (const which of order) got[which] = await slice(graphs[which][name]!, 250);
    per.new.push(got.new!);
    per.old.push(got.old!);
    ratios.push(got.new! / got.old!);
  }
  process.stdout.write(
    `${name}: new ${median(per.new).toFixed(2)} us/step, ${ref} ${median(per.old).toFixed(2)} us/step, new/old ${median(ratios).toFixed(3)} (min ${Math.min(...ratios).toFixed(3)}, max ${Math.max(...ratios).toFixed(3)})\n`,
  );
}
