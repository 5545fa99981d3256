// One process of the subgraph crash test, over a fresh build of src/: it resumes every run a
// killed predecessor left `running`, then starts runs until the database holds `total`, then
// exits 0. Every node body appends `run activation pid` to the executions log before it
// returns, so the parent can count how often each activation ran, and in which process.
// Usage: node test/subgraph/crash-child.mjs <build-dir> <db> <executions-log> <total>
import { appendFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';

const [build, db, executions, total] = process.argv.slice(2);
const { append, END, graph, resume, run } = await import(pathToFileURL(`${build}/index.js`).href);
const { SqliteStore } = await import(pathToFileURL(`${build}/sqlite.js`).href);

const pause = () => new Promise((resolve) => setTimeout(resolve, Math.random() * 2));
const body = (update) => async (state, ctx) => {
  await pause();
  appendFileSync(executions, `${ctx.runId} ${ctx.activationId} ${process.pid}\n`);
  return update(state);
};

// The per-file audit: read -> check -> (ok | flag) -> END.
const File = z.object({
  file: z.string(),
  size: z.number().default(0),
  verdict: z.string().default(''),
});
const audit = graph('audit', { state: File, output: File.pick({ verdict: true }) })
  .node(
    'read',
    body((s) => ({ size: s.file.length })),
    { reads: ['file'], writes: ['size'] },
  )
  .node(
    'check',
    body(() => undefined),
    { reads: ['size'], writes: [] },
  )
  .node(
    'ok',
    body(() => ({ verdict: 'ok' })),
    { reads: ['size'], writes: ['verdict'] },
  )
  .node(
    'flag',
    body(() => ({ verdict: 'flag' })),
    { reads: ['size'], writes: ['verdict'] },
  )
  .edge('read', 'check')
  .route('check', (s) => (s.size > 4 ? 'flag' : 'ok'), ['ok', 'flag'])
  .edge('ok', END)
  .edge('flag', END)
  .entry('read')
  .compile();

// list -> map over files, each running the audit -> collect -> publish.
const Files = z.object({
  files: z.array(z.string()).default(['a.ts', 'long.ts', 'b.ts']),
  verdicts: z.array(z.string()).default([]),
});
const crash = graph('subgraph-crash', { state: Files, reducers: { verdicts: append } })
  .node(
    'list',
    body(() => undefined),
    { reads: [], writes: [] },
  )
  .subgraph('audit', audit, {
    input: (_s, { item }) => ({ file: item }),
    output: (o) => ({ verdicts: [o.verdict] }),
    reads: [],
    writes: ['verdicts'],
  })
  .node(
    'collect',
    body(() => undefined),
    { reads: ['verdicts'], writes: [] },
  )
  .node(
    'publish',
    body(() => undefined),
    { reads: ['verdicts'], writes: [] },
  )
  .map('list', { over: 'files', branch: 'audit', join: 'collect' })
  .edge('audit', 'collect')
  .edge('collect', 'publish')
  .edge('publish', END)
  .entry('list')
  .compile();

const store = new SqliteStore({ path: db });
process.stdout.write('ready\n');

const check = (result) => {
  if (result.status !== 'succeeded') throw new Error(`run ${result.runId} ended ${result.status}`);
  if (result.state.verdicts.join(',') !== 'ok,flag,ok')
    throw new Error(`run ${result.runId} merged ${result.state.verdicts}`);
};
for (const interrupted of await store.listRuns({ status: 'running' })) {
  check(await resume(store, crash, interrupted.id));
}
for (let n = (await store.listRuns()).length; n < Number(total); n++) {
  check(await run(crash, {}, { store, runId: `run-${String(n).padStart(4, '0')}` }));
}
await store.close();
