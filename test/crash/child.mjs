// One worker process of the crash test, in plain JavaScript over a fresh build of src/ so that
// it starts in a fraction of a second (the parent kills two hundred of them).
// It resumes every run a killed predecessor left `running`, then starts runs until the database
// holds `total`, then exits 0. Every node body appends `run activation pid` to the executions
// log before returning, so the parent can count how often each activation ran, and where.
// Usage: node test/crash/child.mjs <build-dir> <db> <executions-log> <total>
import { appendFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';

const [build, db, executions, total] = process.argv.slice(2);
const { append, END, graph, resume, run } = await import(pathToFileURL(`${build}/index.js`).href);
const { SqliteStore } = await import(pathToFileURL(`${build}/sqlite.js`).href);

const pause = () => new Promise((resolve) => setTimeout(resolve, Math.random() * 2));
const body = (name) => async (_state, ctx) => {
  await pause();
  appendFileSync(executions, `${ctx.runId} ${ctx.activationId} ${process.pid}\n`);
  return { log: [name] };
};

// A chain with a fan-out of two branches in the middle.
const crash = graph('crash', {
  state: z.object({ log: z.array(z.string()).default([]) }),
  reducers: { log: append },
})
  .node('fetch', body('fetch'))
  .node('select', body('select'))
  .node('fix', body('fix'), { writes: ['log'] })
  .node('tests', body('tests'), { writes: ['log'] })
  .node('merge', body('merge'))
  .node('verify', body('verify'))
  .node('publish', body('publish'))
  .edge('fetch', 'select')
  .fanOut('select', ['fix', 'tests'], 'merge')
  .edge('fix', 'merge')
  .edge('tests', 'merge')
  .edge('merge', 'verify')
  .edge('verify', 'publish')
  .edge('publish', END)
  .entry('fetch')
  .compile();

const store = new SqliteStore({ path: db });
process.stdout.write('ready\n');

for (const interrupted of await store.listRuns({ status: 'running' })) {
  const result = await resume(store, crash, interrupted.id);
  if (result.status !== 'succeeded')
    throw new Error(`resume of ${interrupted.id} ended ${result.status}`);
}
for (let n = (await store.listRuns()).length; n < Number(total); n++) {
  const result = await run(crash, {}, { store, runId: `run-${String(n).padStart(4, '0')}` });
  if (result.status !== 'succeeded') throw new Error(`run ${result.runId} ended ${result.status}`);
}
await store.close();
