import pg from 'pg';
import { afterAll, afterEach, expect, it } from 'vitest';
import { z } from 'zod';
import { answer, graph, person, resume, run, type StreamEvent, watch } from '../../src/index.js';
import { PostgresStore } from '../../src/postgres.js';
import {
  describePg,
  dropSchema,
  pgUrl,
  schemaName,
  skipReason,
  testPool,
  truncate,
} from './fixtures/postgres.js';

// A watcher of a run on PostgreSQL wakes on LISTEN/NOTIFY when the run commits, whoever makes
// the commit, instead of reading the store in a loop; and only runs someone watches notify.
const schema = schemaName();
const admin = skipReason === undefined ? testPool({ max: 2 }) : undefined;
const opened: PostgresStore[] = [];

function another(options: { notify?: boolean } = {}): PostgresStore {
  const store = new PostgresStore({ connectionString: pgUrl, schema, poolSize: 2, ...options });
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

const approval = graph('pg-watched', {
  state: z.object({ title: z.string(), approved: z.boolean().default(false) }),
})
  .node('draft', () => ({}))
  .node('review', person({ prompt: 'Ship?', answer: z.object({ approved: z.boolean() }) }))
  .node('ship', () => ({}), { terminal: true })
  .edge('draft', 'review')
  .edge('review', 'ship')
  .entry('draft')
  .compile();

/** Starts a run that stops at its wait, through its own store. */
async function waitingRun(runId: string): Promise<PostgresStore> {
  const driver = another();
  await run(approval, { title: runId }, { store: driver, runId });
  return driver;
}

/** Every event of the run, followed to its end. */
async function followed(store: PostgresStore, runId: string, pollMs: number) {
  const seen: StreamEvent[] = [];
  for await (const event of watch(store, approval, runId, { pollMs })) seen.push(event);
  return seen;
}

describePg('watching a run on PostgreSQL', () => {
  it('wakes the watcher in another store when the run commits, long before its poll would', async () => {
    const driver = await waitingRun('w1');
    const watcher = another();
    // A poll of a minute: only a notification can end this watch within the test's 5 s.
    const watching = followed(watcher, 'w1', 60_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await answer(driver, 'w1', 'w1/review:1', { approved: true }, { by: 'ana' });
    await resume(driver, approval, 'w1');
    const seen = await watching;
    expect(seen.at(-1)).toMatchObject({ type: 'run', status: 'succeeded' });
    expect(seen.filter((e) => e.type === 'wait.answered')).toHaveLength(1);
    // The watch is over: its mark on the run is gone.
    const { rows } = await admin!.query(`SELECT count(*)::int AS n FROM "${schema}".watched`);
    expect(rows[0].n).toBe(0);
  });

  it('notifies for a run only while someone watches it', async () => {
    const driver = await waitingRun('w2');
    const listener = new pg.Client({ connectionString: pgUrl });
    await listener.connect();
    const told: string[] = [];
    listener.on('notification', (m) => {
      if (m.channel.startsWith('waymark_runs_')) told.push(m.payload ?? '');
    });
    await listener.query(`LISTEN "waymark_runs_${schema}"`);
    try {
      await driver.commit('w2', await nextCommitOf(driver, 'w2'));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(told).toEqual([]);
      const watcher = another();
      const follower = await watcher.followCommits('w2');
      expect(follower.live).toBe(true);
      const before = follower.told;
      await driver.commit('w2', await nextCommitOf(driver, 'w2'));
      await follower.next(before, 60_000);
      expect(follower.told).toBe(before + 1);
      // The test's own listener hears it too (its connection may hear it a moment later).
      for (let i = 0; i < 100 && told.length === 0; i++)
        await new Promise((resolve) => setTimeout(resolve, 10));
      expect(told).toEqual(['w2']);
      await follower.close();
    } finally {
      await listener.end();
    }
  });

  it('polls without LISTEN (notify: false, for PgBouncer in transaction mode)', async () => {
    const driver = await waitingRun('w3');
    const watcher = another({ notify: false });
    const follower = await watcher.followCommits('w3');
    expect(follower.live).toBe(false);
    await follower.close();
    const watching = followed(watcher, 'w3', 5);
    await answer(driver, 'w3', 'w3/review:1', { approved: false }, { by: 'ana' });
    await resume(driver, approval, 'w3');
    expect((await watching).at(-1)).toMatchObject({ type: 'run', status: 'succeeded' });
  });

  it('follows a run from a read-only connection, as on a replica, writing nothing (notify: false)', async () => {
    const driver = await waitingRun('w4');
    // A hot standby refuses every write (25006); default_transaction_read_only does too.
    const readOnly = testPool({ max: 2, options: '-c default_transaction_read_only=on' });
    const sent: string[] = [];
    const query = readOnly.query.bind(readOnly) as (...args: unknown[]) => unknown;
    (readOnly as unknown as { query: unknown }).query = (...args: unknown[]) => {
      const first = args[0] as string | { text: string };
      sent.push(typeof first === 'string' ? first : first.text);
      return query(...args);
    };
    try {
      const replica = new PostgresStore({ pool: readOnly, schema, notify: false, create: false });
      opened.push(replica);
      const watching = followed(replica, 'w4', 5);
      await answer(driver, 'w4', 'w4/review:1', { approved: true }, { by: 'ana' });
      await resume(driver, approval, 'w4');
      expect((await watching).at(-1)).toMatchObject({ type: 'run', status: 'succeeded' });
      await replica.close();
      expect(sent.length).toBeGreaterThan(0);
      expect(sent.filter((text) => /\b(INSERT|UPDATE|DELETE)\b/i.test(text))).toEqual([]);
    } finally {
      await readOnly.end();
    }
  });
});

/** A bare commit (the run is not read again): what the trigger sees of any commit. */
async function nextCommitOf(store: PostgresStore, runId: string) {
  const record = (await store.getRun(runId))!;
  return {
    seq: record.seq + 1,
    at: Date.now(),
    status: record.status,
    error: null,
    event: JSON.stringify({ type: 'test' }),
    trace: null,
    snapshot: null,
  };
}
