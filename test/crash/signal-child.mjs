// A worker process of the signal crash test, in plain JavaScript over a fresh build of src/.
// It hosts one run of `crash-paid` (first -> paid, an event keyed 'k' -> last) on a SQLite
// file until the run succeeds, then exits 0. Run for the first time, it sends the signal (id
// sig-1, to { graph, key: 'k' }) before it enqueues the run, so the signal is kept until the
// worker's fold opens the wait. Its mode says where it dies, by SIGKILL of itself:
// - die-before-consume: right before the store delivers the kept signal to the open wait;
// - die-after-consume: right after that delivery, before the answer is stepped and committed;
// - normal: nowhere; it sends sig-1 again to the run (a webhook's retry) once its worker runs.
// Every body appends `node runId pid` to the log before returning.
// Usage: node test/crash/signal-child.mjs <build-dir> <db> <log> <run-id> <mode>
import { appendFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';

const [build, db, log, runId, mode] = process.argv.slice(2);
const { END, enqueue, event, graph, signal, Worker } = await import(
  pathToFileURL(`${build}/index.js`).href
);
const { SqliteStore } = await import(pathToFileURL(`${build}/sqlite.js`).href);

const note = (node, update) => {
  appendFileSync(log, `${node} ${runId} ${process.pid}\n`);
  return update;
};
const State = z.object({ paidCents: z.number().default(0), n: z.number().default(0) });
const g = graph('crash-paid', { state: State })
  .node('first', () => note('first', { n: 1 }))
  .node(
    'paid',
    event({ name: 'payment', schema: z.object({ paidCents: z.number() }), key: () => 'k' }),
  )
  .node('last', (s) => note('last', { n: s.n + 1 }))
  .edge('first', 'paid')
  .edge('paid', 'last')
  .edge('last', END)
  .entry('first')
  .compile();

const die = () => process.kill(process.pid, 'SIGKILL');
const real = new SqliteStore({ path: db });
const store = new Proxy(real, {
  get(target, key) {
    const value = Reflect.get(target, key, target);
    if (key === 'matchSignal') {
      return async (wait, at) => {
        if (mode === 'die-before-consume') die();
        const got = await value.call(target, wait, at);
        if (mode === 'die-after-consume' && got !== undefined) die();
        return got;
      };
    }
    return typeof value === 'function' ? value.bind(target) : value;
  },
});

const payment = { paidCents: 1200 };
if ((await real.getRun(runId)) === undefined) {
  await signal(real, { graph: g, key: 'k' }, 'payment', payment, { id: 'sig-1' });
  await enqueue(real, g, {}, { runId });
}
const stop = new AbortController();
const worker = new Worker(store, [g], { leaseMs: 1_000, pollMs: 20 }).run(stop.signal);
process.stdout.write('ready\n');
if (mode === 'normal') await signal(real, runId, 'payment', payment, { id: 'sig-1', graph: g });
for (;;) {
  if ((await real.getRun(runId))?.status === 'succeeded') break;
  await new Promise((resolve) => setTimeout(resolve, 20));
}
stop.abort();
await worker;
real.close();
