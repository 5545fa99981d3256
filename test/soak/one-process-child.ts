// One process, many runs (issue 33, soaks): runs a small graph `runs` times on one SQLite file
// and prints, as JSON lines, the heap after a forced GC, the open file descriptors and the
// database file's size at each quarter. Started by one-process.test.ts with --expose-gc.
import { readdirSync, statSync } from 'node:fs';
import { z } from 'zod';
import { answer, append, graph, person, resume, run } from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';

const [path = '', count = '1000'] = process.argv.slice(2);
const runs = Number(count);

const ticket = graph('soak-ticket', {
  state: z.object({
    title: z.string(),
    notes: z.array(z.string()).default([]),
    approved: z.boolean().default(false),
  }),
  reducers: { notes: append },
})
  .node('triage', (s, ctx) => ({ notes: [`triaged ${s.title} (${ctx.activationId})`] }))
  .node('draft', (s) => ({ notes: [`drafted ${s.notes.length}`] }), { retry: { attempts: 2 } })
  .node('ask', person({ prompt: 'ok?', answer: z.object({ approved: z.boolean() }) }))
  .node(
    'send',
    async (s, ctx) => {
      await ctx.effect('send', async () => ({ sent: s.title }));
      return { notes: ['sent'] };
    },
    { terminal: true },
  )
  .edge('triage', 'draft')
  .edge('draft', 'ask')
  .edge('ask', 'send')
  .entry('triage')
  .compile();

const store = new SqliteStore({ path });
const gc = (globalThis as { gc?: () => void }).gc!;
const sample = (done: number) => {
  gc();
  gc();
  const fds = readdirSync('/proc/self/fd').length;
  // The database file alone: the WAL beside it is bounded by SQLite's checkpoints (about 4 MB),
  // and moves into the file at each one.
  const bytes = statSync(path).size;
  process.stdout.write(
    `${JSON.stringify({ done, heap: process.memoryUsage().heapUsed, fds, bytes })}\n`,
  );
};

sample(0);
for (let i = 1; i <= runs; i++) {
  // Half the runs wait for a person, are answered and resumed: the path most long-lived
  // services take; the others are answered by nobody and left waiting, as abandoned ones are.
  const runId = `r${i}`;
  const first = await run(ticket, { title: `t${i}` }, { store, runId });
  if (first.status !== 'waiting') throw new Error(`run ${runId} ${first.status}`);
  if (i % 2 === 0) {
    await answer(store, runId, `${runId}/ask:1`, { approved: true }, { by: 'soak' });
    const done = await resume(store, ticket, runId);
    if (done.status !== 'succeeded') throw new Error(`run ${runId} ${done.status}`);
  }
  if (i % (runs / 4) === 0) sample(i);
}
await store.close();
