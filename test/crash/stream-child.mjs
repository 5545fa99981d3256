// The runner of the stream crash test, in plain JavaScript over a fresh build of src/: it runs
// (or, given `resume`, resumes) one run of a 30-step loop whose every step emits an event and
// takes a few ms, on a SQLite file; the parent SIGKILLs it mid-run.
// Usage: node test/crash/stream-child.mjs <build-dir> <db> <run|resume>
import { pathToFileURL } from 'node:url';
import { z } from 'zod';

const [build, db, mode] = process.argv.slice(2);
const { END, graph, resume, run } = await import(pathToFileURL(`${build}/index.js`).href);
const { SqliteStore } = await import(pathToFileURL(`${build}/sqlite.js`).href);

const steps = 30;
const loop = graph('stream-crash', { state: z.object({ n: z.number().default(0) }) })
  .node(
    'tick',
    async (s, ctx) => {
      ctx.emit('tick', { n: s.n });
      await new Promise((resolve) => setTimeout(resolve, 8));
      return { n: s.n + 1 };
    },
    { visits: steps },
  )
  .route('tick', (s) => (s.n < steps ? 'tick' : END), ['tick', END])
  .entry('tick')
  .compile();

const store = new SqliteStore({ path: db });
process.stdout.write('ready\n');
const result =
  mode === 'resume'
    ? await resume(store, loop, 'r1')
    : await run(loop, {}, { store, runId: 'r1', leaseMs: 1_000 });
await store.close();
process.exit(result.status === 'succeeded' ? 0 : 1);
