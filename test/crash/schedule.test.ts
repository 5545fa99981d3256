import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SqliteStore } from '../../src/sqlite.js';
import { buildSrc, root, startChild } from './harness.js';

// A schedule's tick survives the death of the worker process that takes it: a real worker on a
// SQLite file, SIGKILLed right before it records the tick's run, right after (before it takes
// the tick), and right after it takes the tick (before the run's node starts). After a restart
// the tick has started exactly one run, whose node ran once, and the schedule has moved on.

const child = join(root, 'test/crash/schedule-child.mjs');
const hour = 3_600_000;
let work: string;
let build: string;

beforeAll(() => {
  ({ work, build } = buildSrc('schedule'));
}, 120_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

it.each(['die-before-start', 'die-after-start', 'die-after-tick'])(
  'a worker killed %s: after a restart, the tick started one run, which succeeded once',
  async (mode) => {
    const db = join(work, `${mode}.db`);
    const log = join(work, `${mode}.log`);
    const top = Math.floor(Date.now() / hour) * hour;
    const first = startChild(child, [build, db, log, String(top), mode]);
    expect((await first.exit).signal).toBe('SIGKILL');

    const second = startChild(child, [build, db, log, String(top), 'normal']);
    const ended = await second.exit;
    expect(ended.code, second.stderr()).toBe(0);
    const store = new SqliteStore({ path: db });
    try {
      const runId = `sched:hourly:${new Date(top).toISOString()}`;
      expect((await store.listRuns()).map((r) => r.id)).toEqual([runId]);
      const completed = (await store.events(runId))
        .map((e) => JSON.parse(e.event) as { type: string; activation?: string })
        .filter((e) => e.type === 'completed' && e.activation === 'write:1');
      expect(completed).toHaveLength(1);
      expect((await store.getRun(runId))?.status).toBe('succeeded');
      // Killed after the tick was taken, the worker may have been running the node already (a
      // worker folds the new run while its schedule loop takes the tick): a node cut off
      // mid-body runs again, as any does. Killed before, the node had not started.
      const writes = readFileSync(log, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('write '));
      if (mode !== 'die-after-tick') expect(writes).toHaveLength(1);
      expect(await store.getSchedule('hourly')).toMatchObject({
        nextAt: top + hour,
        lastTickAt: top,
        lastRunId: runId,
      });
    } finally {
      await store.close();
    }
  },
  60_000,
);
