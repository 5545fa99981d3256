import { WaymarkError } from '../../error/waymark-error.js';

// How the SQLite store names what went wrong: a driver error becomes a stable code, and a
// refusal says what the contract calls it. Testable without a database.

/** The most events one run can hold: its history is keyed by (run number << 32) + seq. */
export const maxSqliteSeq = 0xffff_ffff;

/** There is no such run in the file. */
export function runNotFound(runId: string): WaymarkError {
  return new WaymarkError('RUN_NOT_FOUND', `there is no run "${runId}"`, { retryable: false });
}

/** A run's history is full: its keys hold 32 bits of seq. */
export function tooLong(runId: string, seq: number): WaymarkError {
  return new WaymarkError(
    'STORE_LIMIT',
    `run "${runId}" cannot take commit ${seq}: a SQLite store holds at most ${maxSqliteSeq} events per run`,
    { retryable: false, details: { runId, attempted: seq, limit: maxSqliteSeq } },
  );
}

/** A commit against a stale or out-of-order sequence number. */
export function conflict(runId: string, current: unknown, attempted: number): WaymarkError {
  return new WaymarkError(
    'STORE_CONFLICT',
    `run "${runId}" is at sequence ${current}; a commit for ${attempted} is stale or out of order`,
    { details: { runId, current, attempted } },
  );
}

// SQLite result codes that say the database cannot be used right now, not that a row is bad.
const unusable = /^SQLITE_(BUSY|LOCKED|FULL|READONLY|IOERR|CANTOPEN|PERM)/;

/**
 * A driver error that means the store cannot be reached (locked by another writer past the busy
 * timeout, disk full, read-only, I/O error) as STORE_UNAVAILABLE; anything else as it is.
 * Nothing was written: the transaction rolled back.
 */
export function unavailable(path: string, error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string' || !unusable.test(code)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new WaymarkError('STORE_UNAVAILABLE', `${path}: ${message} (${code})`, {
    // Another writer's lock passes; a full disk or a read-only file does not, by itself.
    retryable: code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'),
    details: { path, sqlite: code },
    cause: error,
  });
}

/** A file SQLite cannot open as a database is reported as corrupt; other errors pass through. */
export function unreadableFile(path: string, error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  if (code !== 'SQLITE_NOTADB' && code !== 'SQLITE_CORRUPT') return error;
  return new WaymarkError('STORE_CORRUPT', `${path} is not a waymark database`, {
    retryable: false,
    details: { path, reason: 'not-waymark' },
    cause: error,
  });
}
