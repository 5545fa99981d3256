// A worker process of the wake crash test, in plain JavaScript over a fresh build of src/.
// It hosts one run of the graph named below on a SQLite file (creating it if missing) until the
// run succeeds, then exits 0. The graph is `nap` (first -> a 300 ms sleep -> last) or `later`
// (first -> a node whose notBefore is 300 ms after first ran). Its mode says where it dies, by
// SIGKILL of itself, once the timer is due:
// - die-before-wake: right before the commit that wakes the sleeping activation;
// - die-after-wake: right after that commit, before the node after it (or the woken body) starts;
// - normal: nowhere.
// Every body appends `node runId pid` to the log before returning.
// Usage: node test/crash/wake-child.mjs <build-dir> <db> <log> <run-id> <graph> <mode>
import { appendFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';

const [build, db, log, runId, which, mode] = process.argv.slice(2);
const { END, enqueue, graph, sleep, Worker } = await import(
  pathToFileURL(`${build}/index.js`).href
);
const { SqliteStore } = await import(pathToFileURL(`${build}/sqlite.js`).href);

const note = (node, update) => {
  appendFileSync(log, `${node} ${runId} ${process.pid}\n`);
  return update;
};
const State = z.object({ at: z.number().default(0), n: z.number().default(0) });
const graphs = {
  nap: graph('crash-nap', { state: State })
    .node('first', () => note('first', { n: 1 }))
    .node('nap', sleep({ for: '300ms' }))
    .node('last', (s) => note('last', { n: s.n + 1 }))
    .edge('first', 'nap')
    .edge('nap', 'last')
    .edge('last', END)
    .entry('first')
    .compile(),
  later: graph('crash-later', { state: State })
    .node('first', () => note('first', { at: Date.now() + 300 }))
    .node('last', (s) => note('last', { n: s.n + 1 }), { notBefore: (s) => s.at })
    .edge('first', 'last')
    .edge('last', END)
    .entry('first')
    .compile(),
};
const g = graphs[which];
const sleeper = which === 'nap' ? 'nap:1' : 'last:1';

const die = () => process.kill(process.pid, 'SIGKILL');
// The wake: the sleeping activation's completion, which carries no update.
const wakes = (c) => {
  const e = JSON.parse(c.event);
  return e.type === 'completed' && e.activation === sleeper && e.update === undefined;
};
const real = new SqliteStore({ path: db });
const store = new Proxy(real, {
  get(target, key) {
    const value = Reflect.get(target, key, target);
    if (key === 'commit' || key === 'commitAll') {
      return async (id, given) => {
        const commits = key === 'commit' ? [given] : given;
        if (mode === 'die-before-wake' && commits.some(wakes)) die();
        await value.call(target, id, given);
        if (mode === 'die-after-wake' && commits.some(wakes)) die();
      };
    }
    return typeof value === 'function' ? value.bind(target) : value;
  },
});

if ((await real.getRun(runId)) === undefined) await enqueue(real, g, {}, { runId });
const stop = new AbortController();
const worker = new Worker(store, [g], { leaseMs: 1_000, pollMs: 20 }).run(stop.signal);
process.stdout.write('ready\n');
for (;;) {
  if ((await real.getRun(runId))?.status === 'succeeded') break;
  await new Promise((resolve) => setTimeout(resolve, 20));
}
stop.abort();
await worker;
real.close();
