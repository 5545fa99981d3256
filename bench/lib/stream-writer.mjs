// The writer of the stream benchmark, in its own process: a loop of `steps` nodes, each
// pausing a random 2-12 ms, run on a SQLite file or a PostgreSQL schema by the waymark build
// the parent names.
// Usage: node bench/lib/stream-writer.mjs <index.js> <sqlite.js|postgres.js> <db | postgres-url#schema> <run-id> <steps>
import { pathToFileURL } from 'node:url';
import { z } from 'zod';

const [index, sqlite, db, runId, steps] = process.argv.slice(2);
const { END, graph, run } = await import(pathToFileURL(index).href);
const driver = await import(pathToFileURL(sqlite).href);
const total = Number(steps);
const loop = graph('stream-bench', { state: z.object({ n: z.number().default(0) }) })
  .node(
    'tick',
    async (s) => {
      await new Promise((resolve) => setTimeout(resolve, 2 + Math.random() * 10));
      return { n: s.n + 1 };
    },
    { visits: total },
  )
  .route('tick', (s) => (s.n < total ? 'tick' : END), ['tick', END])
  .entry('tick')
  .compile();
const [url, schema] = db.split('#');
const store = db.startsWith('postgres')
  ? new driver.PostgresStore({ connectionString: url, schema, poolSize: 2 })
  : new driver.SqliteStore({ path: db });
const result = await run(loop, {}, { store, runId });
await store.close();
process.exit(result.status === 'succeeded' ? 0 : 1);
