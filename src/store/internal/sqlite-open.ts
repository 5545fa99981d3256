import { existsSync, mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type Database from 'better-sqlite3';
import { WaymarkError } from '../../error/waymark-error.js';
import { migrate } from './schema.js';
import { unavailable, unreadableFile } from './sqlite-errors.js';

// Opening a SQLite file, with what keeps it from opening named as a code before anything is
// written: a directory, a missing file, a folder that cannot be made, the driver's native
// module, a file that holds another application's tables.

// better-sqlite3 is CommonJS: required directly, it skips the ES module loader's translation
// (and the start-up of its CommonJS export parser), which `waymark ls` would pay on every start.
const require = createRequire(import.meta.url);
const Driver = require('better-sqlite3') as typeof Database;

/**
 * Where better-sqlite3's build put its native module: handed to it, it skips the search its
 * `bindings` helper makes through a dozen candidate paths at every first open. Anywhere else (a
 * prebuilt binary, a debug build), that search finds it as before.
 */
function builtBinding(): string | undefined {
  try {
    const file = join(
      dirname(require.resolve('better-sqlite3')),
      '..',
      'build',
      'Release',
      'better_sqlite3.node',
    );
    return existsSync(file) ? file : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Opens the file, mapping what keeps it from opening to a code: a directory, a missing file
 * (when it may not be created), a directory that cannot be made, the driver's native module.
 */
export function openFile(path: string, create: boolean, timeout: number): Database.Database {
  if (path !== ':memory:') {
    if (existsSync(path) && statSync(path).isDirectory()) {
      throw cannotOpen(path, 'directory', `${path} is a directory, not a database file`);
    }
    if (!create && !existsSync(path)) {
      throw cannotOpen(path, 'missing', `there is no database at ${path}`);
    }
    try {
      if (create) mkdirSync(dirname(path), { recursive: true });
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw cannotOpen(path, 'no-directory', `cannot make the directory of ${path}: ${why}`, error);
    }
  }
  try {
    const nativeBinding = builtBinding();
    return new Driver(path, {
      timeout,
      fileMustExist: !create,
      ...(nativeBinding !== undefined && { nativeBinding }),
    });
  } catch (error) {
    // better-sqlite3 loads its native module at the first open.
    const message = error instanceof Error ? error.message : String(error);
    const code = (error as { code?: unknown }).code;
    if (
      code === 'ERR_DLOPEN_FAILED' ||
      message.includes('bindings') ||
      message.includes('NODE_MODULE_VERSION')
    ) {
      const first = message.split('\n')[0];
      throw cannotOpen(
        path,
        'driver-broken',
        `better-sqlite3 is installed, but its native module cannot be loaded: ${first}`,
        error,
      );
    }
    throw unavailable(path, error);
  }
}

/** Refuses a file that holds tables but not waymark's, and (unless creating) an empty one. */
export function ownSchemaOrNone(db: Database.Database, path: string, create: boolean): void {
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    .pluck()
    .all() as string[];
  if (tables.includes('schema_version') || (create && tables.length === 0)) return;
  const holds =
    tables.length === 0 ? 'it is empty' : `it holds other tables (${tables.join(', ')})`;
  throw new WaymarkError('STORE_CORRUPT', `${path} is not a waymark database: ${holds}`, {
    retryable: false,
    details: { path, reason: 'not-waymark' },
  });
}

function cannotOpen(path: string, reason: string, message: string, cause?: unknown): WaymarkError {
  return new WaymarkError('STORE_UNAVAILABLE', message, {
    retryable: false,
    details: { path, reason },
    ...(cause !== undefined && { cause }),
  });
}

/**
 * Opens a store's file as the store uses it: refused if another application's, in WAL mode at
 * the `synchronous` level, foreign keys on, migrated to this waymark's schema, and `prepare`d.
 * @throws WaymarkError `STORE_UNAVAILABLE`, `STORE_CORRUPT` (unreadableFile) and what openFile throws.
 */
export function openStoreFile<T>(
  path: string,
  options: {
    readonly create: boolean;
    readonly busyTimeoutMs: number;
    readonly synchronous: string;
  },
  prepare: (db: Database.Database) => T,
): { readonly db: Database.Database; readonly prepared: T } {
  const db = openFile(path, options.create, options.busyTimeoutMs);
  try {
    // Before any pragma: WAL mode would be written into another application's file.
    ownSchemaOrNone(db, path, options.create);
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.synchronous.toUpperCase()}`);
    db.pragma('foreign_keys = ON');
    migrate(db, Date.now());
    return { db, prepared: prepare(db) };
  } catch (error) {
    db.close();
    throw unreadableFile(path, error);
  }
}
