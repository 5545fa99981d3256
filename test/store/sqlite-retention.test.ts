import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/sqlite.js';
import { notOwned, owned } from '../../src/store/internal/sqlite-retention.js';
import { sampleRun as newRun, sampleCommit as step } from '../../src/testing/index.js';

// Deleting runs from a SQLite file: the list of tables a run owns is checked against the
// file's real schema, and a deleted run's number is never handed out again.

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'waymark-retention-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A column that names a run: its id (run_id, *_run_id, run) or its number (num). */
const runColumn = /(^|_)run(_id)?$|^num$/;

describe('deleting runs from SQLite', () => {
  it('knows every table with a run column: each is deleted with the run, or says why it is kept', () => {
    const path = join(dir, 'w.db');
    new SqliteStore(path).close();
    const db = new Database(path, { readonly: true });
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .pluck()
      .all() as string[];
    const withRunColumn = tables.filter((table) =>
      (db.pragma(`table_info(${table})`) as { name: string }[]).some((c) => runColumn.test(c.name)),
    );
    db.close();
    // A table added later (signals, schedules, limits) with a run column fails here until it is
    // put in `owned` (deleted with the run) or `notOwned` (with why it outlives it).
    const listed = new Set([...Object.keys(owned), ...Object.keys(notOwned)]);
    expect(withRunColumn.filter((t) => !listed.has(t))).toEqual([]);
    expect([...listed].filter((t) => !tables.includes(t))).toEqual([]);
    // The events table is keyed by (number << 32) + seq: it has no run column to find.
    expect(Object.keys(owned)).toContain('events');
  });

  it("never gives a later run a deleted run's number, so a process that remembers it writes nothing", async () => {
    const path = join(dir, 'w.db');
    const a = new SqliteStore(path);
    const b = new SqliteStore(path);
    await a.createRun(newRun('r1'));
    await a.createRun(newRun('r2'));
    await a.commit('r2', step(1, { status: 'succeeded', snapshot: '{}' }));
    // b remembers r2's number (it is the newest run, the highest number).
    expect((await b.loadRun('r2'))?.run.seq).toBe(1);
    await a.deleteRun('r2');
    await a.createRun(newRun('r3'));
    await a.commit('r3', step(1));
    await expect(b.commit('r2', step(2))).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
    const db = new Database(path, { readonly: true });
    expect(db.prepare('SELECT id, num FROM runs ORDER BY num').all()).toEqual([
      { id: 'r1', num: 1 },
      { id: 'r3', num: 3 },
    ]);
    db.close();
    expect((await b.loadRun('r3'))?.events.map((e) => e.seq)).toEqual([1]);
    a.close();
    b.close();
  });

  it('a run deleted and made anew under the same id is driven by a process that knew the old one', async () => {
    const path = join(dir, 'w.db');
    const a = new SqliteStore(path);
    const b = new SqliteStore(path);
    await a.createRun(newRun('r1'));
    await a.commit('r1', step(1, { status: 'failed', snapshot: '{}' }));
    expect((await b.loadRun('r1'))?.run.seq).toBe(1);
    await a.deleteRun('r1');
    await a.createRun(newRun('r1'));
    const lease = await b.acquire('r1', { owner: 'b', leaseMs: 60_000 });
    await b.commit('r1', step(1, { epoch: lease.epoch }));
    expect((await a.loadRun('r1'))?.run).toMatchObject({ seq: 1, status: 'running' });
    a.close();
    b.close();
  });
});
