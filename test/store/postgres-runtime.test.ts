import { afterAll, afterEach, expect, it } from 'vitest';
import { z } from 'zod';
import {
  answer,
  append,
  cancel,
  END,
  type GraphBuilder,
  graph,
  isWaymarkError,
  loadTrace,
  person,
  resume,
  run,
} from '../../src/index.js';
import { PostgresStore } from '../../src/postgres.js';
import { manualClock } from '../support/clock.js';
import {
  describePg,
  dropSchema,
  pgUrl,
  schemaName,
  skipReason,
  testPool,
  truncate,
} from './fixtures/postgres.js';

// The runtime end to end on PostgreSQL: run, resume after a failure, answer and cancel, each
// through its own store (its own pool), as separate processes sharing the database would.
const schema = schemaName();
const admin = skipReason === undefined ? testPool({ max: 2 }) : undefined;
const opened: PostgresStore[] = [];

/** A store of its own, as another process has. */
function another(): PostgresStore {
  const store = new PostgresStore({ connectionString: pgUrl, schema, poolSize: 2 });
  opened.push(store);
  return store;
}

afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
  if (admin !== undefined) await truncate(admin, schema).catch(() => {});
});
afterAll(async () => {
  if (admin === undefined) return;
  await dropSchema(admin, schema);
  await admin.end();
});

const code = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: unknown) => (isWaymarkError(e) ? e.code : String(e)),
  );

const Pipeline = z.object({ log: z.array(z.string()).default([]) });

/** A 7-step pipeline s1..s7 whose step 5 fails while `broken.value` is true. */
function sevenSteps(broken: { value: boolean }) {
  const calls: Record<string, number> = {};
  let b: GraphBuilder<z.output<typeof Pipeline>, string, z.input<typeof Pipeline>> = graph(
    'seven',
    { state: Pipeline, reducers: { log: append } },
  );
  for (let i = 1; i <= 7; i++) {
    const name = `s${i}`;
    b = b.node(
      name,
      () => {
        calls[name] = (calls[name] ?? 0) + 1;
        if (name === 's5' && broken.value) throw new Error('the upstream API is down');
        return { log: [name] };
      },
      { retry: { attempts: 2 } },
    );
  }
  for (let i = 1; i < 7; i++) b = b.edge(`s${i}`, `s${i + 1}`);
  return { graph: b.edge('s7', END).entry('s1').compile(), calls };
}

const Post = z.object({
  title: z.string(),
  approved: z.boolean().default(false),
  published: z.boolean().default(false),
});

/** draft -> approve (a person) -> publish, which posts once through an effect. */
function approval(posted: string[]) {
  return graph('approval', { state: Post })
    .node('draft', (s) => ({ title: `${s.title}!` }))
    .node('approve', person({ prompt: 'publish?', answer: z.object({ approved: z.boolean() }) }))
    .node('publish', async (s, ctx) => {
      await ctx.effect('post', async (key) => {
        posted.push(key);
        return { id: posted.length };
      });
      return { published: s.approved };
    })
    .edge('draft', 'approve')
    .edge('approve', 'publish')
    .edge('publish', END)
    .entry('draft')
    .compile();
}

describePg('the runtime on PostgresStore', () => {
  it('a failed run resumes in another process at the step that failed; steps before it never run again', async () => {
    const broken = { value: true };
    const { graph: g, calls } = sevenSteps(broken);
    const first = await run(g, {}, { store: another(), clock: manualClock(), runId: 'r' });
    expect(first.status).toBe('failed');
    expect(calls).toEqual({ s1: 1, s2: 1, s3: 1, s4: 1, s5: 2 });

    broken.value = false;
    const second = await resume(another(), g, 'r', { clock: manualClock() });
    expect(second.status).toBe('succeeded');
    expect(calls).toEqual({ s1: 1, s2: 1, s3: 1, s4: 1, s5: 3, s6: 1, s7: 1 });
    expect(second.state.log).toEqual(['s1', 's2', 's3', 's4', 's5', 's6', 's7']);
    const reader = another();
    expect((await loadTrace(reader, 'r')).path).toEqual(['s1', 's2', 's3', 's4', 's5', 's6', 's7']);
    expect(await reader.getRun('r')).toMatchObject({
      status: 'succeeded',
      lease: { live: false, expiresAt: 0 },
    });
  });

  it('a person answers in one process and the run goes on in another; the effect is done once', async () => {
    const posted: string[] = [];
    const g = approval(posted);
    const first = await run(g, { title: 'Pricing' }, { store: another(), runId: 'r' });
    expect(first.status).toBe('waiting');

    await answer(another(), 'r', 'r/approve:1', { approved: true }, { by: 'editor' });
    expect(
      await code(answer(another(), 'r', 'r/approve:1', { approved: false }, { by: 'x' })),
    ).toBe('WAIT_ALREADY_ANSWERED');
    const done = await resume(another(), g, 'r');
    expect(done.status).toBe('succeeded');
    expect(done.state).toMatchObject({ title: 'Pricing!', approved: true, published: true });
    expect(posted).toEqual(['r/publish:1/post']);
    expect(await resume(another(), g, 'r')).toMatchObject({ status: 'succeeded' });
    expect(posted).toHaveLength(1);
  });

  it('a waiting run cancelled from another process stays cancelled: resume refuses it', async () => {
    const g = approval([]);
    await run(g, { title: 't' }, { store: another(), runId: 'r' });
    const after = await cancel(another(), g, 'r', { reason: 'the release was pulled' });
    expect(after.status).toBe('cancelled');
    expect(await code(resume(another(), g, 'r'))).toBe('RUN_NOT_RESUMABLE');
    expect(await another().listWaits('r', { open: true })).toEqual([]);
  });

  it('a run driven by one process is refused to another with RUN_OWNED; a cancellation reaches it', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let begin!: () => void;
    const begun = new Promise<void>((resolve) => {
      begin = resolve;
    });
    const slow = graph('slow', { state: Pipeline, reducers: { log: append } })
      .node('fetch', async () => {
        begin();
        await gate;
        return { log: ['fetch'] };
      })
      .node('draft', () => ({ log: ['draft'] }))
      .edge('fetch', 'draft')
      .edge('draft', END)
      .entry('fetch')
      .compile();
    const running = run(slow, {}, { store: another(), runId: 'r' });
    await begun;
    await expect(resume(another(), slow, 'r')).rejects.toMatchObject({ code: 'RUN_OWNED' });
    await cancel(another(), slow, 'r');
    release();
    const stopped = await running;
    expect(stopped.status).toBe('cancelled');
    expect((await another().getRun('r'))?.status).toBe('cancelled');
  });
});
