import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/sqlite.js';
import { migrations, schemaVersion } from '../../src/store/internal/schema.js';
import { queueStatements } from '../../src/store/internal/sqlite-queue-sql.js';
import { sampleRun, sampleCommit as step } from '../../src/testing/index.js';

// A worker's claim on SQLite reads the runs that are running and those an inbox item or a due
// timer wakes: a run asleep, waiting for a person or finished is never read, however many there
// are, so ten thousand sleeping runs cost an idle worker's poll nothing.

let dir: string;
let path: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'waymark-claim-'));
  path = join(dir, 'waymark.db');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const claim = {
  owner: 'w1',
  host: 'h',
  pid: 1,
  leaseMs: 10_000,
  graphs: [{ name: 'g', hash: 'h' }],
  limit: 8,
};

describe('a claim of runs on SQLite', () => {
  it('walks the running runs and the woken ones, never every run in the file', async () => {
    await new SqliteStore(path).close();
    const db = new Database(path);
    const plan = (
      db
        .prepare(`EXPLAIN QUERY PLAN ${queueStatements.runCandidates}`)
        .all({ graphs: '[]', now: 0, limit: 8 }) as { detail: string }[]
    ).map((row) => row.detail);
    db.close();
    const scans = plan.filter((line) => line.startsWith('SCAN '));
    expect(scans.some((line) => line.startsWith('SCAN running'))).toBe(true);
    // Only the small tables and the list of woken runs are scanned; runs and events are searched.
    expect(scans.filter((line) => /^SCAN (runs|events|head)\b/.test(line))).toEqual([]);
  });

  it('takes a run never started, one an inbox item wakes and one whose timer is due, and leaves the sleeping one', async () => {
    const store = new SqliteStore({ path, now: () => 1_000 });
    const runs = ['fresh', 'answered', 'due', 'asleep'].map((id, i) =>
      sampleRun(id, { graph: 'g', graphHash: 'h', createdAt: i }),
    );
    await store.createRuns(runs);
    // All but the fresh one wait: the answered one for a person, the others on a timer.
    for (const id of ['answered', 'due', 'asleep'])
      await store.commit(id, { ...step(1), status: 'waiting' });
    await store.wake('answered', 1_000);
    const db = new Database(path);
    db.prepare('INSERT INTO timers (run_id, id, at) VALUES (?, ?, ?)').run('due', 'sleep', 500);
    db.prepare('INSERT INTO timers (run_id, id, at) VALUES (?, ?, ?)').run('asleep', 'sleep', 9e12);
    db.close();
    const claimed = await store.claimAndLoadRuns(claim);
    expect(claimed.map((c) => c.lease.runId).sort()).toEqual(['answered', 'due', 'fresh']);
    await store.close();
  });

  it('keeps the running runs of a file from before the table of running runs claimable', async () => {
    const store = new SqliteStore(path);
    await store.createRuns([
      sampleRun('fresh', { graph: 'g', graphHash: 'h' }),
      sampleRun('done', { graph: 'g', graphHash: 'h' }),
    ]);
    await store.commit('done', { ...step(1), status: 'succeeded' });
    await store.close();
    // The file as the waymark before migration 8 left it: without anything migration 8 or a
    // later one made, so that opening it applies them all again.
    const db = new Database(path);
    for (const [type, name] of madeAfter(7, db)) db.exec(`DROP ${type} IF EXISTS "${name}"`);
    db.exec('DELETE FROM schema_version WHERE version >= 8');
    db.close();
    const reopened = new SqliteStore(path);
    const claimed = await reopened.claimAndLoadRuns(claim);
    expect(claimed.map((c) => c.lease.runId)).toEqual(['fresh']);
    await reopened.close();
    const after = new Database(path);
    expect(after.prepare('SELECT max(version) AS v FROM schema_version').get()).toEqual({
      v: schemaVersion,
    });
    after.close();
  });
});

/** The tables, indexes and triggers of `db` that the first `applied` migrations do not make. */
function madeAfter(applied: number, db: Database.Database): [string, string][] {
  const objects = (d: Database.Database) =>
    d.prepare("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'").all() as {
      type: string;
      name: string;
    }[];
  const early = new Database(':memory:');
  for (const migration of migrations.slice(0, applied)) early.exec(migration);
  const made = new Set(objects(early).map((o) => `${o.type} ${o.name}`));
  early.close();
  const order = ['trigger', 'index', 'view', 'table'];
  return objects(db)
    .filter((o) => o.name !== 'schema_version' && !made.has(`${o.type} ${o.name}`))
    .sort((a, b) => order.indexOf(a.type) - order.indexOf(b.type))
    .map((o) => [o.type.toUpperCase(), o.name]);
}
