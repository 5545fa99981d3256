// Puts a stored SQLite run back as it stood, so a benchmark can resume the same history again and
// again: a resume appends its events (`resumed`, the failure) and a snapshot, and a failure adds
// one more error to the state's error list, so resuming one run repeatedly would resume a growing
// one. A second connection deletes what the last resume added, in one transaction, then the store
// must report the run as before. It writes the store's tables as schema version 3 lays them out:
// a run's history is keyed by (run number << 32) + seq, and its newest row holds its status and
// error.

import Database from 'better-sqlite3';
import type { RunRecord } from '../../src/index.js';
import { check } from './measure.js';

export interface RunRestorer {
  /** Puts the run back as `first` recorded it (untimed work of a benchmark's prepare). */
  restore(first: RunRecord): void;
  close(): void;
}

export function runRestorer(path: string): RunRestorer {
  const db = new Database(path);
  // The restore and the timed resume write to one WAL, and SQLite checkpoints it on whichever
  // commit first finds it past 1,000 pages. Writing the same pages each cycle, that is the same
  // statement every time: the restore (untimed) or the resume (timed, paying several ms), an
  // accident of how many pages each writes (it moved one version's resume 30% when 4038396 was
  // compared). So this connection never checkpoints: the store pays for every checkpoint, its
  // own pages and the restore's, the same for any version, and more than a real resume pays.
  db.pragma('wal_autocheckpoint = 0');
  const historyKey = '((SELECT num FROM runs WHERE id = @id) << 32) + @seq';
  const sql = {
    events: db.prepare(
      `DELETE FROM events WHERE key > ${historyKey} AND key <= ((SELECT num FROM runs WHERE id = @id) << 32) + 4294967295`,
    ),
    snapshots: db.prepare('DELETE FROM snapshots WHERE run_id = ? AND seq > ?'),
    // A store keeps only a run's first and newest snapshot: a resume's own snapshot drops the one
    // the run had, so putting the run back re-inserts the snapshots it had before the call.
    keptSnapshots: db.prepare('SELECT seq, data FROM snapshots WHERE run_id = ?'),
    reinsert: db.prepare('INSERT OR IGNORE INTO snapshots (run_id, seq, data) VALUES (?, ?, ?)'),
    head: db.prepare(
      `UPDATE events SET status = @status, error = @error, at = @at WHERE key = ${historyKey}`,
    ),
  };
  const kept = new Map<string, { seq: number; data: string }[]>();
  const restore = db.transaction((first: RunRecord) => {
    let snapshots = kept.get(first.id);
    if (snapshots === undefined) {
      snapshots = sql.keptSnapshots.all(first.id) as { seq: number; data: string }[];
      kept.set(first.id, snapshots);
    }
    sql.events.run({ id: first.id, seq: first.seq });
    sql.snapshots.run(first.id, first.seq);
    for (const snapshot of snapshots) sql.reinsert.run(first.id, snapshot.seq, snapshot.data);
    const head = { id: first.id, seq: first.seq, status: first.status, error: first.error };
    check(sql.head.run({ ...head, at: first.updatedAt }).changes === 1, 'no head to restore');
  });
  return { restore, close: () => db.close() };
}
