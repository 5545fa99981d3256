// Files and settings for the scenarios that persist to SQLite (sqlite, resume): temporary
// database files on disk, LangGraph.js's SqliteSaver opened at the same synchronous level as
// waymark's store, and the size of a database file once its write-ahead log is folded in.

import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import Database from 'better-sqlite3';
import type { Contender } from './measure.js';

/**
 * A fresh directory under the OS temp directory (on this machine the same ext4 disk as the
 * repository: not a RAM disk), removed when the process exits.
 */
export function tempDir(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `waymark-bench-${name}-`));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** What SQLite reports for a connection: journal mode and synchronous level. */
export interface SqliteMode {
  readonly journalMode: string;
  readonly synchronous: string;
}

const synchronousNames = ['off', 'normal', 'full', 'extra'];

export function modeOf(db: Database.Database): SqliteMode {
  const level = db.pragma('synchronous', { simple: true }) as number;
  return {
    journalMode: String(db.pragma('journal_mode', { simple: true })),
    synchronous: synchronousNames[level] ?? String(level),
  };
}

/**
 * LangGraph.js's SQLite checkpointer on `path`, created as its docs show
 * (`SqliteSaver.fromConnString`). It switches the file to WAL itself; the synchronous level is set
 * here to waymark's default, NORMAL, which is also what SQLite picks for a WAL database in the
 * better-sqlite3 build (SQLITE_DEFAULT_WAL_SYNCHRONOUS=1), so both engines commit alike.
 */
export function langgraphSaver(path: string): SqliteSaver {
  const saver = SqliteSaver.fromConnString(path);
  saver.db.pragma('synchronous = NORMAL');
  return saver;
}

/**
 * The bytes a closed database takes on disk: its write-ahead log is checkpointed into the main
 * file and truncated first, then the main file and whatever -wal is left are summed.
 */
export function settledBytes(path: string): number {
  const db = new Database(path);
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
  let bytes = 0;
  for (const file of [path, `${path}-wal`]) if (existsSync(file)) bytes += statSync(file).size;
  return bytes;
}

/** Bytes as the tables print them: B, KiB or MiB. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${Math.round(bytes)} B`;
  const kib = bytes / 1024;
  if (kib < 100) return `${kib.toFixed(kib < 10 ? 2 : 1)} KiB`;
  if (kib < 1000) return `${Math.round(kib)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(2)} MiB`;
}

/**
 * A contender that makes `commits` bare autocommit INSERTs of a ~250-byte row (the size of a
 * waymark event with its trace entry) into a rowid table (one B-tree, one page per commit) on
 * its own file, WAL at synchronous=NORMAL: the least a durable step can cost on this disk.
 */
export function commitFloor(
  path: string,
  commits: number,
): { readonly contender: Contender; readonly close: () => void } {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE events (key INTEGER PRIMARY KEY, event TEXT)');
  const insert = db.prepare('INSERT INTO events (key, event) VALUES (?, ?)');
  const row = `{"type":"completed","activation":"n1:1","update":{"counter":1}}${' '.repeat(190)}`;
  let seq = 0;
  return {
    contender: {
      name: 'one SQLite commit',
      units: commits,
      call: async () => {
        for (let i = 0; i < commits; i++) insert.run(++seq, row);
        return undefined;
      },
    },
    close: () => db.close(),
  };
}
