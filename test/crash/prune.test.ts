import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/sqlite.js';
import { owned } from '../../src/store/internal/sqlite-retention.js';
import { sampleRun as newRun, sampleCommit as step } from '../../src/testing/index.js';
import { bin } from '../cli/support.js';

// `waymark prune` SIGKILLed mid-way through a SQLite file of finished runs: each delete is one
// transaction, so every run is either whole (it loads, every row of it is there) or gone (no
// row of any table it owned is left). A second prune then deletes the rest.

const dir = mkdtempSync(join(tmpdir(), 'waymark-prune-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const runs = 400;

async function fill(path: string): Promise<void> {
  const store = new SqliteStore(path);
  for (let i = 0; i < runs; i++) {
    const id = `r${i}`;
    await store.createRun(newRun(id));
    await store.commit(id, step(1, { waits: { open: [wait(id)] } }));
    await store.recordEffect({ runId: id, key: 'mail', result: '"sent"', at: 1_500 });
    await store.commit(id, step(2, { status: 'succeeded', snapshot: '{"done":true}' }));
  }
  store.close();
}

function wait(runId: string) {
  return {
    runId,
    requestId: `${runId}/q`,
    node: 'ask',
    activation: 'ask:1',
    request: '{}',
    openedAt: 1_200,
    answer: null,
    answeredBy: null,
    answeredAt: null,
    closedAt: null,
  };
}

/** Rows of each owned table whose run is gone: what a half-deleted run would leave. */
function orphans(path: string): Record<string, number> {
  const db = new Database(path, { readonly: true });
  try {
    const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    return {
      events: count(
        'SELECT count(*) AS n FROM events WHERE (key >> 32) NOT IN (SELECT num FROM runs)',
      ),
      snapshots: count(
        'SELECT count(*) AS n FROM snapshots WHERE run_id NOT IN (SELECT id FROM runs)',
      ),
      effects: count('SELECT count(*) AS n FROM effects WHERE run_id NOT IN (SELECT id FROM runs)'),
      waits: count('SELECT count(*) AS n FROM waits WHERE run_id NOT IN (SELECT id FROM runs)'),
      leases: count('SELECT count(*) AS n FROM leases WHERE num NOT IN (SELECT num FROM runs)'),
    };
  } finally {
    db.close();
  }
}

function left(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM runs').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

describe('waymark prune and SIGKILL', () => {
  it('killed mid-way: every run is whole or gone, and a second prune deletes the rest', async () => {
    const path = join(dir, 'w.db');
    await fill(path);
    expect(Object.keys(owned)).toContain('waits');
    const child = spawn(
      process.execPath,
      [bin, '--db', path, 'prune', '--status', 'succeeded', '--older-than', '0s'],
      { stdio: 'ignore' },
    );
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    // Killed once some runs are gone and some are left.
    for (;;) {
      const n = left(path);
      if (n < runs) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    child.kill('SIGKILL');
    const signal = await exited;
    const remaining = left(path);
    expect(orphans(path)).toEqual({ events: 0, snapshots: 0, effects: 0, waits: 0, leases: 0 });
    const store = new SqliteStore(path);
    for (const run of await store.listRuns()) {
      const loaded = await store.loadRun(run.id);
      expect(loaded?.run).toMatchObject({ status: 'succeeded', seq: 2 });
      expect(await store.listWaits(run.id)).toHaveLength(1);
      expect(await store.listEffects(run.id)).toHaveLength(1);
    }
    store.close();
    // When the kill came after the last delete, there is nothing left to check mid-way.
    if (signal === 'SIGKILL') expect(remaining).toBeGreaterThan(0);

    const again = spawn(
      process.execPath,
      [bin, '--db', path, 'prune', '--status', 'succeeded', '--older-than', '0s'],
      { stdio: 'ignore' },
    );
    const code = await new Promise<number | null>((resolve) => again.on('exit', resolve));
    expect(code).toBe(0);
    expect(left(path)).toBe(0);
    expect(orphans(path)).toEqual({ events: 0, snapshots: 0, effects: 0, waits: 0, leases: 0 });
  }, 60_000);
});
