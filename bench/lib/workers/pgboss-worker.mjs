// One pg-boss worker process of the throughput benchmark: pg-boss at its fastest for no-op jobs.
// Usage: node bench/lib/workers/pgboss-worker.mjs <pg-url> <schema> <queue> <batch> <idle-ms>
//
// It fetches up to <batch> jobs, runs their (empty) handler, and completes the batch in one call,
// then fetches again at once; only an empty fetch waits <idle-ms>. pg-boss 10's own `work()`
// loop waits its polling interval (at least 500 ms) after every batch, busy or not, so it would
// measure that interval rather than the queue. The schema and queue are the parent's: this
// process neither migrates nor supervises. Prints `ready` once started; SIGTERM stops it after
// the batch in hand; SIGUSR2 and its exit print `queries <n>`, the statements its pool ran so far.
import pg from 'pg';
import PgBoss from 'pg-boss';

const [url, schema, queue, batch = '8', idle = '50'] = process.argv.slice(2);
const batchSize = Number(batch);
const idleMs = Number(idle);

let queries = 0;
const query = pg.Pool.prototype.query;
pg.Pool.prototype.query = function (...args) {
  queries++;
  return query.apply(this, args);
};

const boss = new PgBoss({
  connectionString: url,
  schema,
  max: 4,
  migrate: false,
  supervise: false,
  schedule: false,
});
boss.on('error', (error) => process.stderr.write(`pg-boss ${process.pid}: ${error}\n`));
await boss.start();
let stopping = false;
process.on('SIGTERM', () => {
  stopping = true;
});
process.on('SIGUSR2', () => process.stdout.write(`queries ${queries}\n`));
process.stdout.write('ready\n');
while (!stopping) {
  const jobs = await boss.fetch(queue, { batchSize });
  if (jobs.length === 0) {
    await new Promise((resolve) => setTimeout(resolve, idleMs));
    continue;
  }
  // The handler: nothing to do.
  await boss.complete(
    queue,
    jobs.map((job) => job.id),
  );
}
const counted = queries;
await boss.stop({ graceful: false, wait: true });
process.stdout.write(`queries ${counted}\n`, () => process.exit(0));
