// A worker process of the schedule crash test, in plain JavaScript over a fresh build of src/.
// It hosts an hourly schedule of the graph below on a SQLite file (declaring it if missing, so
// that the tick at <top> is due at once) until the run of that tick succeeds, then exits 0. Its
// mode says where it dies, by SIGKILL of itself:
// - die-before-start: when the tick is due, right before its run is recorded;
// - die-after-start: right after the run is recorded, before the tick is taken;
// - die-after-tick: right after the tick is taken, before the run's node starts;
// - normal: nowhere.
// The node appends `write runId pid` to the log before returning.
// Usage: node test/crash/schedule-child.mjs <build-dir> <db> <log> <top> <mode>
import { appendFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';

const [build, db, log, topText, mode] = process.argv.slice(2);
const top = Number(topText);
const { END, graph, schedule, tickRunId, Worker } = await import(
  pathToFileURL(`${build}/index.js`).href
);
const { SqliteStore } = await import(pathToFileURL(`${build}/sqlite.js`).href);

const runId = tickRunId('hourly', top);
const g = graph('crash-report', { state: z.object({ team: z.string() }) })
  .node('write', () => {
    appendFileSync(log, `write ${runId} ${process.pid}\n`);
    return {};
  })
  .edge('write', END)
  .entry('write')
  .compile();

const die = () => process.kill(process.pid, 'SIGKILL');
const real = new SqliteStore({ path: db });
const store = new Proxy(real, {
  get(target, key) {
    const value = Reflect.get(target, key, target);
    if (key === 'createRuns') {
      return async (runs, options) => {
        if (mode === 'die-before-start') die();
        await value.call(target, runs, options);
        if (mode === 'die-after-start') die();
      };
    }
    if (key === 'changeSchedule') {
      return async (...args) => {
        const written = await value.apply(target, args);
        if (mode === 'die-after-tick' && written !== undefined) die();
        return written;
      };
    }
    return typeof value === 'function' ? value.bind(target) : value;
  },
});

if ((await real.getSchedule('hourly')) === undefined) {
  await schedule(real, g, {
    id: 'hourly',
    cron: '0 * * * *',
    input: { team: 'ops' },
    clock: { now: () => top - 1, sleep: async () => {} },
  });
}
const stop = new AbortController();
const worker = new Worker(store, [g], { leaseMs: 1_000, pollMs: 20, schedulePollMs: 20 }).run(
  stop.signal,
);
process.stdout.write('ready\n');
for (;;) {
  if ((await real.getRun(runId))?.status === 'succeeded') break;
  await new Promise((resolve) => setTimeout(resolve, 20));
}
stop.abort();
await worker;
real.close();
