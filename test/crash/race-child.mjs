// One process of the ownership race: `start` begins a run the parent then SIGKILLs mid-flight;
// `resume` waits for the parent's "go" on stdin and resumes that run, racing another resumer.
// Every node body appends `activation pid` to the executions log before it returns.
// Exit codes: 0 the run was driven to its end here, 4 refused with RUN_OWNED (printed).
// Usage: node test/crash/race-child.mjs <build-dir> <db> <executions-log> <run-id> <start|resume>
import { appendFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';

const [build, db, executions, runId, mode] = process.argv.slice(2);
const { END, graph, isWaymarkError, resume, run } = await import(
  pathToFileURL(`${build}/index.js`).href
);
const { SqliteStore } = await import(pathToFileURL(`${build}/sqlite.js`).href);

const body = (name) => async (state, ctx) => {
  if (name === 'n0') process.stdout.write('started\n');
  await new Promise((resolve) => setTimeout(resolve, 15));
  appendFileSync(executions, `${ctx.activationId} ${process.pid}\n`);
  return { n: state.n + 1 };
};
let b = graph('race', { state: z.object({ n: z.number().default(0) }) }).node('n0', body('n0'));
for (let i = 1; i < 12; i++) b = b.node(`n${i}`, body(`n${i}`)).edge(`n${i - 1}`, `n${i}`);
const race = b.edge('n11', END).entry('n0').compile();

const store = new SqliteStore({ path: db });
if (mode === 'start') {
  await run(race, {}, { store, runId });
  process.exit(0);
}
process.stdout.write('ready\n');
await new Promise((resolve) => process.stdin.once('data', resolve));
try {
  const result = await resume(store, race, runId);
  await store.close();
  process.exit(result.status === 'succeeded' ? 0 : 1);
} catch (error) {
  if (isWaymarkError(error) && error.code === 'RUN_OWNED') {
    process.stdout.write(`${error.code}\n`);
    process.exit(4);
  }
  throw error;
}
