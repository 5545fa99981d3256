// One worker process of the publish crash test, in plain JavaScript over a fresh build of src/.
// It resumes every run a killed predecessor left `running`, then starts runs until the database
// holds `total`, then (if given a path) writes every run's final state there as JSON and exits 0.
// Each run drafts a list of items and publishes every item to the test's HTTP receiver (a tiny
// CMS) through ctx.effect, which sends the effect's key as the Idempotency-Key header.
// Usage: node test/crash/publish-child.mjs <build-dir> <db> <receiver-url> <total> <shape>
//          <stall-after> <replays-log> [states.json]
//   shape: `many` (2 to 5 items per run) or `one` (a single item per run)
//   stall-after: n > 0 makes the n-th ctx.effect to return (its result recorded in the ledger,
//     its activation not yet complete) print `recorded` and stall until the parent kills it
//   replays-log: gets `run index pid` for every ctx.effect answered by the ledger without a call
import { appendFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';

const [build, db, receiver, total, shape, stallAfter, replays, statesFile] = process.argv.slice(2);
const { append, END, graph, resume, run } = await import(pathToFileURL(`${build}/index.js`).href);
const { SqliteStore } = await import(pathToFileURL(`${build}/sqlite.js`).href);

// The items a run publishes, from its number alone; the test computes the same list. `launch`
// appears twice in longer runs: two branches with the same payload are still two intents.
const titles = ['launch', 'pricing', 'roadmap', 'launch', 'faq'];
const itemsOf = (runId) =>
  shape === 'one' ? ['launch'] : titles.slice(0, 2 + (Number(runId.slice(4)) % 4));

let effectsReturned = 0;

const Post = z.object({ index: z.number(), item: z.string(), id: z.string() });
const publish = graph('publish', {
  state: z.object({
    items: z.array(z.string()).default([]),
    posts: z.array(Post).default([]),
    published: z.number().default(0),
  }),
  reducers: { posts: append },
})
  .node('draft', (_state, ctx) => ({ items: itemsOf(ctx.runId) }))
  .node(
    'publish',
    async (_state, ctx) => {
      const intent = { runId: ctx.runId, index: ctx.index, item: ctx.item, intent: 'publish' };
      let called = false;
      const post = await ctx.effect('post', async (key) => {
        called = true;
        const response = await fetch(`${receiver}/posts`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'idempotency-key': key,
            'x-child-pid': String(process.pid),
          },
          body: JSON.stringify(intent),
        });
        if (!response.ok) throw new Error(`the receiver answered ${response.status}`);
        return response.json();
      });
      if (!called) appendFileSync(replays, `${ctx.runId} ${ctx.index} ${process.pid}\n`);
      if (++effectsReturned === Number(stallAfter)) {
        process.stdout.write('recorded\n');
        await new Promise(() => setInterval(() => {}, 60_000));
      }
      return { posts: [{ index: ctx.index, item: ctx.item, id: post.id }] };
    },
    { kind: 'effect', writes: ['posts'] },
  )
  .node('collect', (state) => ({ published: state.posts.length }))
  .map('draft', { over: 'items', branch: 'publish', join: 'collect', concurrency: 2 })
  .edge('publish', 'collect')
  .edge('collect', END)
  .entry('draft')
  .compile();

const store = new SqliteStore({ path: db });
process.stdout.write('ready\n');

for (const interrupted of await store.listRuns({ status: 'running' })) {
  const result = await resume(store, publish, interrupted.id);
  if (result.status !== 'succeeded')
    throw new Error(`resume of ${interrupted.id} ended ${result.status}: ${result.error?.message}`);
}
for (let n = (await store.listRuns()).length; n < Number(total); n++) {
  const result = await run(publish, {}, { store, runId: `run-${String(n).padStart(4, '0')}` });
  if (result.status !== 'succeeded')
    throw new Error(`run ${result.runId} ended ${result.status}: ${result.error?.message}`);
}
if (statesFile) {
  // A succeeded run is returned as it is: its final state, nothing runs again.
  const states = {};
  for (const { id } of await store.listRuns()) {
    const result = await resume(store, publish, id);
    states[id] = { status: result.status, state: result.state };
  }
  writeFileSync(statesFile, JSON.stringify(states));
}
await store.close();
