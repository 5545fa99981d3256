import { WaymarkError } from '../../error/waymark-error.js';

/** Options of a {@link SqliteStore}. */
export interface SqliteStoreOptions {
  /**
   * The database file, created with its directory if missing; relative paths resolve against
   * `process.cwd()`. Default `.waymark/waymark.db`. `':memory:'` keeps a private database in
   * this connection only, gone when it closes. A path alone may be passed instead of the
   * options: `new SqliteStore('runs.db')`.
   */
  readonly path?: string;
  /**
   * When a commit is on disk. `'normal'` (default): a commit survives any crash of the process,
   * but the last commits before a power loss or an OS crash may be lost. `'full'`: a commit
   * also survives power loss, at a cost per commit (see docs/stores.md).
   */
  readonly synchronous?: 'normal' | 'full';
  /**
   * How long a statement waits for another connection's write lock before the call fails with
   * `STORE_UNAVAILABLE` (retryable). Default 5,000 ms.
   */
  readonly busyTimeoutMs?: number;
  /**
   * The store's clock, which alone decides when a run's lease expires. Default `Date.now`: the
   * file lives on this machine, so every process sharing it reads the same clock.
   */
  readonly now?: () => number;
  /**
   * Whether a missing file is created (with its directory) and given waymark's schema. Default
   * `true`. With `false` only an existing waymark database opens and nothing is created: a
   * missing file is `STORE_UNAVAILABLE`, a file without waymark's schema `STORE_CORRUPT`.
   */
  readonly create?: boolean;
}

/**
 * The constructor's argument as options. A string is the path: in plain JavaScript
 * `new SqliteStore('runs.db')` is an easy call to write, and ignoring it (the default file was
 * used instead) sent runs where nobody looked. Anything else that is not an options object is
 * refused rather than read as "no options".
 */
export function sqliteOptions(argument: unknown): SqliteStoreOptions & {
  readonly synchronous: 'normal' | 'full';
  readonly busyTimeoutMs: number;
} {
  const refuse = (message: string) =>
    new WaymarkError('OPTIONS_INVALID', message, { retryable: false });
  const given = typeof argument === 'string' ? { path: argument } : argument;
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw refuse(
      `new SqliteStore() takes a file path or an options object such as { path: 'runs.db' }, not ${describe(argument)}`,
    );
  }
  const { path } = given as SqliteStoreOptions;
  if (path !== undefined && (typeof path !== 'string' || path.length === 0)) {
    throw refuse(`the SQLite path must be a non-empty string, not ${describe(path)}`);
  }
  const options = given as SqliteStoreOptions;
  const synchronous = options.synchronous ?? 'normal';
  if (synchronous !== 'normal' && synchronous !== 'full') {
    throw new WaymarkError(
      'OPTIONS_INVALID',
      `synchronous must be 'normal' or 'full', not ${JSON.stringify(synchronous)}`,
      { retryable: false },
    );
  }
  const busyTimeoutMs = options.busyTimeoutMs ?? 5_000;
  if (!(Number.isInteger(busyTimeoutMs) && busyTimeoutMs >= 0)) {
    throw new WaymarkError(
      'OPTIONS_INVALID',
      `busyTimeoutMs must be a whole number >= 0, not ${JSON.stringify(busyTimeoutMs)}`,
      { retryable: false },
    );
  }
  return { ...options, synchronous, busyTimeoutMs };
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') return String(value);
  return value === null ? 'null' : typeof value;
}
