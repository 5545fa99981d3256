// One worker process of the chaos and zombie tests, over a plain-JavaScript build of src/.
// Usage: node test/workers/chaos-worker.mjs <build> <pg-url> <schema> <log> <receiver> [lease-ms]
// Prints "ready" once it is registered; SIGTERM drains it. WORKER_INLINE=0 queues every
// activation as a task (the worker runs no run's next activation itself).
import { pathToFileURL } from 'node:url';
import { chaosGraphs } from './chaos-graphs.mjs';

const [build, url, schema, log, receiver, leaseMs = '2000'] = process.argv.slice(2);
const waymark = await import(pathToFileURL(`${build}/index.js`).href);
const { PostgresStore } = await import(pathToFileURL(`${build}/postgres.js`).href);
const graphs = Object.values(chaosGraphs(waymark, { log, receiver }));
// Every statement bounded below a third of the (short) lease, as a Worker requires.
const queryTimeoutMs = Math.floor(Number(leaseMs) / 3) - 50;
const store = new PostgresStore({
  connectionString: url,
  schema,
  poolSize: 6,
  queryTimeoutMs,
  statementTimeoutMs: queryTimeoutMs - 100,
});
const stop = new AbortController();
process.on('SIGTERM', () => stop.abort());
const worker = new waymark.Worker(store, graphs, {
  concurrency: 16,
  leaseMs: Number(leaseMs),
  pollMs: 200,
  inline: process.env.WORKER_INLINE !== '0',
  onEvent: (event) => {
    if (event.type === 'error' && process.env.CHAOS_VERBOSE)
      process.stderr.write(`${event.error}\n`);
  },
});
setTimeout(() => process.stdout.write('ready\n'), 50);
await worker.run(stop.signal);
await store.close();
process.exit(0);
