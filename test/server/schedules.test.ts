import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { z } from 'zod';
import { WaymarkClient } from '../../src/client.js';
import { END, getSchedule, graph, type Store, schedule } from '../../src/index.js';
import { serve } from '../../src/server.js';
import { SqliteStore } from '../../src/sqlite.js';

// A server hosts the schedules of the graphs it serves: a due tick starts its run, and the
// server drives it in process, with no worker.

const dir = mkdtempSync(join(tmpdir(), 'waymark-serve-schedules-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const hour = 3_600_000;

const report = graph('report', {
  state: z.object({ team: z.string(), done: z.boolean().default(false) }),
})
  .node('write', () => ({ done: true }))
  .edge('write', END)
  .entry('write')
  .compile();

async function succeeded(store: Store, count: number): Promise<string[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const runs = await store.listRuns({ graph: 'report' });
    if (runs.length >= count && runs.every((r) => r.status === 'succeeded'))
      return runs.map((r) => r.id).sort();
    if (Date.now() > deadline) throw new Error(`runs: ${runs.map((r) => r.status).join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

it('a server on a SQLite file starts the due ticks of its graphs’ schedules and drives their runs', async () => {
  const store = new SqliteStore(join(dir, 'serve.sqlite'));
  // Declared just after the hour two hours ago: the ticks of the last two hours are due.
  const top = Math.floor(Date.now() / hour) * hour;
  const declared = top - 2 * hour + 1;
  await schedule(store, report, {
    id: 'hourly',
    cron: '0 * * * *',
    input: { team: 'sales' },
    overlap: 'allow',
    catchUp: 'all',
    clock: { now: () => declared, sleep: async () => {} },
  });
  const served = await serve({ store, graphs: [report], token: 't', schedulePollMs: 50 });
  try {
    const ids = await succeeded(store, 2);
    const ticks = [top - hour, top].map((t) => new Date(t).toISOString());
    expect(ids).toEqual(ticks.map((t) => `sched:hourly:${t}`));
    const loaded = await store.loadRun(ids[0]!);
    expect(JSON.parse(loaded!.snapshot.data).state).toEqual({ team: 'sales', done: true });
    expect((await getSchedule(store, 'hourly')).nextAt).toBe(top + hour);
  } finally {
    await served.close();
    await store.close();
  }
});

it('schedules over HTTP and waymark/client: add, list, get, pause, resume, remove, with coded refusals', async () => {
  const store = new SqliteStore(join(dir, 'http.sqlite'));
  const served = await serve({ store, graphs: [report], token: 't', schedulePollMs: 0 });
  const api = new WaymarkClient({ url: served.url, token: 't' });
  const codeOf = (p: Promise<unknown>) =>
    p.then(
      () => 'resolved',
      (e: { code?: string }) => e.code,
    );
  try {
    const added = await api.schedules.add({
      graph: 'report',
      id: 'daily',
      cron: '0 9 * * *',
      timezone: 'Europe/Berlin',
      input: { team: 'ops' },
    });
    expect(added).toMatchObject({ id: 'daily', paused: false, input: { team: 'ops' } });
    expect(typeof added.nextAt).toBe('number');
    expect((await api.schedules.list()).map((s) => s.id)).toEqual(['daily']);
    expect((await api.schedules.pause('daily')).paused).toBe(true);
    expect((await api.schedules.resume('daily')).paused).toBe(false);
    expect((await api.schedules.get('daily')).timezone).toBe('Europe/Berlin');
    expect(
      await codeOf(api.schedules.add({ graph: 'report', cron: 'often', input: { team: 'a' } })),
    ).toBe('SCHEDULE_INVALID');
    expect(await codeOf(api.schedules.add({ graph: 'nope', cron: '* * * * *' }))).toBe(
      'GRAPH_NOT_SERVED',
    );
    await api.schedules.remove('daily');
    expect(await codeOf(api.schedules.get('daily'))).toBe('SCHEDULE_NOT_FOUND');
    expect(await codeOf(api.schedules.remove('daily'))).toBe('SCHEDULE_NOT_FOUND');
  } finally {
    await served.close();
    await store.close();
  }
});
