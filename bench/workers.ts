// The worker numbers, on PostgreSQL with real worker processes. bench/run.ts starts one fresh
// process per part, in this order:
//
//   node --import tsx bench/workers.ts throughput   no-op activations/s with 1, 2, 4 workers vs pg-boss
//   node --import tsx bench/workers.ts fanout       a 100-way fan-out of 50 ms nodes, 1 vs 4 workers
//   node --import tsx bench/workers.ts latency      commit -> node start, NOTIFY vs polling only
//   node --import tsx bench/workers.ts step         durable step in process vs a bare commit and
//                                                   LangGraph.js's PostgresSaver
//   node --import tsx bench/workers.ts takeover     SIGKILL of a worker -> another one runs its work
//   node --import tsx bench/workers.ts widemap      a 1,000-item map vs a 100-item one, per item
//
// Run them all: npm run bench -- workers (needs PostgreSQL: WAYMARK_PG_URL, default
// postgres://postgres@127.0.0.1:5432/test). Each measurement works in a fresh schema of its own
// and drops it afterwards. Printed, never asserted.

import { loadavg } from 'node:os';
import { serverInfo } from './lib/pg.js';
import { emit } from './lib/report.js';
import { waymarkOrigin } from './lib/waymark.js';
import { type PartReport, type WorkerBench, workerBench } from './lib/workers/context.js';
import { fanout } from './lib/workers/fanout.js';
import { latency } from './lib/workers/latency.js';
import { stepCost } from './lib/workers/step-cost.js';
import { takeover } from './lib/workers/takeover.js';
import { throughput } from './lib/workers/throughput.js';
import { wideMap } from './lib/workers/wide-map.js';

const parts: Readonly<Record<string, (bench: WorkerBench) => Promise<PartReport>>> = {
  throughput,
  fanout,
  latency,
  step: stepCost,
  takeover,
  widemap: wideMap,
};

const part = process.argv[2] ?? '';
const measure = parts[part];
if (measure === undefined) {
  process.stderr.write(
    `usage: node --import tsx bench/workers.ts ${Object.keys(parts).join('|')}\n`,
  );
  process.exit(2);
}

const bench = await workerBench();
// Per part, so a burst of other work on a shared machine shows next to the numbers it touched.
const loadBefore = loadavg()[0]!;
try {
  const server = await serverInfo(bench.admin);
  const report = await measure(bench);
  emit({
    scenario: 'workers',
    title: report.title,
    waymarkOrigin,
    ...(report.peerName !== undefined && { peerName: report.peerName }),
    rows: report.rows,
    notes: [
      `workers ${part}: ${server}, ${bench.settings.reps < 7 ? 'QUICK' : 'full'} settings, load average ${loadBefore.toFixed(2)} -> ${loadavg()[0]!.toFixed(2)}`,
      ...report.notes,
    ],
    details: { part, server, settings: bench.settings, ...report.details },
  });
} finally {
  await bench.admin.end();
}
// Worker processes are gone; pools of pg-boss or LangGraph.js may keep timers: exit now.
process.exit(0);
