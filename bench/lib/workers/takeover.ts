// Time from a worker's death to another worker running its work: two idle worker processes, a
// run whose one node holds its worker (it would take 10 minutes); as soon as one worker's body has
// started, and a random fraction of a renewal period later, that worker is SIGKILLed; timed until
// the other worker's body of the same activation starts. At the default lease (Worker: 10 s) and
// at a short one; each sample in a fresh schema with fresh workers.

import { check, progress, stat } from '../measure.js';
import { inSchema, sleep } from '../pg.js';
import type { Row } from '../report.js';
import { kill, startWaymarkWorkers } from './children.js';
import type { PartReport, WorkerBench } from './context.js';
import { msBetween, Timeline } from './timeline.js';

const defaultLeaseMs = 10_000;
const shortLeaseMs = 2_000;
const goalMs = 15_000;
const activation = 'hold:1';

async function sample(bench: WorkerBench, leaseMs: number | undefined, i: number): Promise<number> {
  const lease = leaseMs ?? defaultLeaseMs;
  return inSchema(bench.admin, 'kill', async (schema) => {
    const store = await bench.store(schema);
    const workers = await startWaymarkWorkers(
      store,
      bench.build,
      2,
      leaseMs === undefined ? {} : { leaseMs },
    );
    try {
      const timeline = new Timeline();
      timeline.follow(workers);
      const runId = `hold-${i}`;
      await bench.wm.enqueue(store, bench.graphs.hold, { holdMs: 600_000 }, { runId });
      await store.wake(runId, Date.now());
      const first = await timeline.at(runId, activation, 'start');
      const victim = workers.find((w) => w.pid === first.pid)!;
      const survivor = workers.find((w) => w !== victim)!;
      // Leases are renewed every third of one: die at a random point of that cycle.
      await sleep(Math.random() * (lease / 3));
      // Held as a task, or (a worker runs a run's sole next node itself) as the run's lease.
      const [task] = await store.listTasks(runId);
      const holder = task?.owner ?? (await store.getRun(runId))?.lease?.owner;
      check(holder?.includes(`:${victim.pid}:`) === true, `the work is held by ${holder}`);
      timeline.forget(runId, activation, 'start');
      const killed = process.hrtime.bigint();
      await kill(victim);
      const next = await timeline.at(runId, activation, 'start', lease * 3 + 10_000);
      check(next.pid === survivor.pid, `the work went to ${next.pid}, not the survivor`);
      return msBetween(killed, next.ns);
    } finally {
      // The survivor holds a 10-minute node: a drain would wait a lease; it is killed too.
      await Promise.all(workers.map((w) => kill(w)));
      await store.close();
    }
  });
}

export async function takeover(bench: WorkerBench): Promise<PartReport> {
  const rows: Row[] = [];
  const details: Record<string, unknown> = {};
  for (const leaseMs of [undefined, shortLeaseMs]) {
    const lease = leaseMs ?? defaultLeaseMs;
    const count = bench.quick ? 2 : leaseMs === undefined ? 5 : 9;
    progress(`workers takeover: lease ${lease} ms, ${count} kills`);
    const samples: number[] = [];
    for (let i = 0; i < count; i++) samples.push(await sample(bench, leaseMs, i));
    const s = stat(samples.map((ms) => ms / 1000));
    const name =
      leaseMs === undefined ? `lease ${lease / 1000} s (default)` : `lease ${lease / 1000} s`;
    rows.push({
      measure: `takeover: SIGKILL -> another worker runs it, ${name}`,
      unit: 's',
      waymark: s,
      ...(leaseMs === undefined && {
        target: `< ${goalMs / 1000} s (max)`,
        met: s.max < goalMs / 1000,
      }),
    });
    details[`lease${lease}`] = samples;
  }
  return {
    title: 'takeover after a worker is SIGKILLed while it holds a task',
    rows,
    notes: [
      `takeover: 2 worker processes (poll 1 s, the default), a run of one node that holds its worker (the run's lease, the node run where it was folded); the holder is SIGKILLed a random 0-${'1/3'} lease after its body started, timed until the other worker's body of the same activation starts. Expected: what is left of the lease (renewed every 1/3 of it: 2/3 to all of it) + up to one poll (a lease that expires notifies no one) + one claim. Median (min-max) of the kills.`,
    ],
    details,
  };
}
