// One waymark worker process of the worker benchmarks, over the bench's tsc build of src/.
// Usage: node bench/lib/workers/waymark-worker.mjs <build-dir> <pg-url> <schema> <options-json>
// Options: those of `Worker` (concurrency, leaseMs, pollMs, folds; absent = the defaults) and
// `notify` of the store. It registers itself (the parent waits for its row in `workers`);
// SIGTERM drains it; SIGUSR2 and its exit print `queries <n>`, the statements its pool ran so far.
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { benchGraphs } from './graphs.mjs';

const [build, url, schema, json = '{}'] = process.argv.slice(2);
const { notify, ...options } = JSON.parse(json);

// Every statement the store runs goes through its pool's query(): counted, not changed.
let queries = 0;
const query = pg.Pool.prototype.query;
pg.Pool.prototype.query = function (...args) {
  queries++;
  return query.apply(this, args);
};

const waymark = await import(pathToFileURL(`${build}/index.js`).href);
const { PostgresStore } = await import(pathToFileURL(`${build}/postgres.js`).href);
// A short lease needs statement deadlines within a third of it, as a Worker requires (the
// store's defaults fit a lease above 9 s): the same fit `waymark worker --lease-ms` makes.
const lease = options.leaseMs ?? 10_000;
const queryTimeoutMs = Math.max(100, Math.floor(lease / 3) - 50);
const store = new PostgresStore({
  connectionString: url,
  schema,
  ...(notify !== undefined && { notify }),
  ...(lease <= 9_000 && { queryTimeoutMs, statementTimeoutMs: Math.max(50, queryTimeoutMs - 100) }),
});
const stop = new AbortController();
process.on('SIGTERM', () => stop.abort());
// The parent reads the count before and after a repetition.
process.on('SIGUSR2', () => process.stdout.write(`queries ${queries}\n`));
const worker = new waymark.Worker(store, Object.values(benchGraphs(waymark)), {
  ...options,
  onEvent: (event) => {
    if (event.type === 'error') process.stderr.write(`worker ${process.pid}: ${event.error}\n`);
  },
});
await worker.run(stop.signal);
await store.close();
process.stdout.write(`queries ${queries}\n`, () => process.exit(0));
