import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { MemoryStore, type Store } from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';
import type { WorkQueue } from '../../src/store/work-queue.js';

// What a store was given and holds, as text to search for a value that must never be stored:
// every argument of every call made to it (all a memory store ever holds), and for the durable
// stores the bytes they keep (the SQLite file and its WAL, every row of the PostgreSQL schema).

/** A store under test, and everything it was given or keeps, as one text. */
export interface RawStore {
  readonly store: Store & WorkQueue;
  /** Every call's arguments so far, and what the store keeps on disk or in its tables. */
  raw(): Promise<string>;
  close(): Promise<void>;
}

/** `store` with every argument of every method call kept, as JSON, in `calls`. */
export function recording<T extends object>(store: T, calls: string[]): T {
  return new Proxy(store, {
    get(target, key) {
      // Read on the store itself: its getters reach its private fields.
      const value = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(text(args));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

function text(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** A memory store, whose raw text is what it was given. */
export function rawMemory(): RawStore {
  const calls: string[] = [];
  return {
    store: recording(new MemoryStore(), calls),
    raw: async () => calls.join('\n'),
    close: async () => {},
  };
}

/** A SQLite store in a file of its own: what it was given, and the file's and WAL's bytes. */
export function rawSqlite(): RawStore {
  const dir = mkdtempSync(join(tmpdir(), 'waymark-raw-'));
  const path = join(dir, 'runs.db');
  const calls: string[] = [];
  const inner = new SqliteStore({ path });
  const bytes = () =>
    [path, `${path}-wal`]
      .filter((file) => existsSync(file))
      .map((file) => readFileSync(file).toString('latin1'))
      .join('\n');
  return {
    store: recording(inner, calls),
    raw: async () => `${calls.join('\n')}\n${bytes()}`,
    close: async () => {
      await inner.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A PostgreSQL store of a test file: what it was given, and every row of its schema. */
export function rawPostgres(db: {
  readonly store: Store & WorkQueue;
  readonly pool: pg.Pool;
  readonly schema: string;
}): RawStore {
  const calls: string[] = [];
  return {
    store: recording(db.store, calls),
    raw: async () => {
      const tables = await db.pool.query<{ table_name: string }>(
        'SELECT table_name FROM information_schema.tables WHERE table_schema = $1',
        [db.schema],
      );
      const rows: string[] = [];
      for (const { table_name } of tables.rows) {
        const dump = await db.pool.query<{ row: string }>(
          `SELECT t::text AS row FROM "${db.schema}"."${table_name}" t`,
        );
        for (const { row } of dump.rows) rows.push(`${table_name}: ${row}`);
      }
      return `${calls.join('\n')}\n${rows.join('\n')}`;
    },
    close: async () => {},
  };
}
