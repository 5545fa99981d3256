import { storeCorrupt } from '../../error/store-corrupt.js';
import type { WaymarkError } from '../../error/waymark-error.js';
import type {
  EffectRecord,
  MemoRecord,
  RunRecord,
  StoredEvent,
  StoredStatus,
  TimerRecord,
  WaitRecord,
} from '../store.js';
import { storedStatuses } from '../store.js';
import { type LeaseRow, leaseView } from './leases.js';

// A database row as the driver hands it over: nothing about its types is known until checked.
// Rows can be damaged by a disk, a hand edit or another program, so every column is checked
// before it becomes a record, and a bad one names the run, the table and the row.

/** A raw row from the driver. */
export type Row = Readonly<Record<string, unknown>>;

/** Which row is being read, for the error message: `events` row at seq 4 of run "r1". */
export interface RowRef {
  readonly runId: string;
  readonly table: string;
  /** The row's key inside the run: a sequence number, an effect key, a wait's request id. */
  readonly key?: string | number;
}

const statuses: ReadonlySet<string> = new Set<StoredStatus>(storedStatuses);

function describe(value: unknown): string {
  if (value === null) return 'NULL';
  if (Buffer.isBuffer(value)) return 'a blob';
  return `${typeof value} ${JSON.stringify(value)}`;
}

/**
 * Reads typed columns out of one row, failing with STORE_CORRUPT on the first bad one.
 *
 * @example
 * const seq = new Columns(row, { runId: 'r1', table: 'runs' }).integer('seq');
 */
export class Columns {
  readonly #row: Row;
  readonly #ref: RowRef;

  constructor(row: Row, ref: RowRef) {
    this.#row = row;
    this.#ref = ref;
  }

  text(column: string): string {
    const value = this.#row[column];
    if (typeof value !== 'string') throw this.#bad(column, value, 'text');
    return value;
  }

  textOrNull(column: string): string | null {
    const value = this.#row[column];
    return value === null ? null : this.text(column);
  }

  integer(column: string): number {
    const value = this.#row[column];
    if (typeof value !== 'number' || !Number.isSafeInteger(value))
      throw this.#bad(column, value, 'an integer');
    return value;
  }

  /** Times are numbers the runtime's clock gave; they need not be whole. */
  time(column: string): number {
    const value = this.#row[column];
    if (typeof value !== 'number' || !Number.isFinite(value))
      throw this.#bad(column, value, 'a time');
    return value;
  }

  integerOrNull(column: string): number | null {
    const value = this.#row[column];
    return value === null || value === undefined ? null : this.integer(column);
  }

  timeOrNull(column: string): number | null {
    const value = this.#row[column];
    return value === null ? null : this.time(column);
  }

  status(column: string): StoredStatus {
    const value = this.text(column);
    if (!statuses.has(value)) throw this.#bad(column, value, 'a run status');
    return value as StoredStatus;
  }

  #bad(column: string, value: unknown, expected: string): WaymarkError {
    const { runId, table, key } = this.#ref;
    const row = key === undefined ? '' : typeof key === 'number' ? ` at seq ${key}` : ` "${key}"`;
    return storeCorrupt(
      runId,
      `its ${table} row${row} holds ${describe(value)} in column ${column}, expected ${expected}`,
      { table, ...(key !== undefined && { key }), column },
    );
  }
}

/**
 * A `runs` row joined with its head (the newest `events` row that holds a status) as a record.
 * The format is read, not judged: a newer format is refused where the run's data would be
 * interpreted (`loadRun`), so listing still shows such a run. A run without a head lost its
 * newest rows.
 *
 * `now` is the store's clock: whether the run's lease is live is judged by it.
 *
 * @example
 * const run = readRun(runWithHeadRow, 'r1', Date.now());
 */
export function readRun(row: Row, runId: string, now: number): RunRecord {
  const c = new Columns(row, { runId, table: 'runs' });
  if (row.seq === null && row.status === null) {
    throw storeCorrupt(
      runId,
      'no row of its history holds its status: its newest rows are missing',
      {
        table: 'events',
      },
    );
  }
  const seq = row.seq;
  const head = new Columns(row, {
    runId,
    table: 'events',
    ...(typeof seq === 'number' && { key: seq }),
  });
  return {
    id: c.text('id'),
    graph: c.text('graph'),
    graphHash: c.text('graph_hash'),
    graphVersion: c.integer('graph_version'),
    stateVersion: c.integer('state_version'),
    format: c.integer('format'),
    status: head.status('status'),
    seq: head.integer('seq'),
    createdAt: c.time('created_at'),
    updatedAt: head.time('updated_at'),
    error: head.textOrNull('error'),
    labels: c.textOrNull('labels'),
    lease: leaseView(readLease(row, runId), now),
  };
}

/**
 * The lease columns of a run row (`lease_owner`, `lease_host`, `lease_pid`, `lease_epoch`,
 * `lease_expires_at`, from a join with `leases`), or undefined for a run with no lease row.
 *
 * @example
 * const row = readLease(runRow, 'r1');
 */
export function readLease(row: Row, runId: string): LeaseRow | undefined {
  if (row.lease_epoch === null || row.lease_epoch === undefined) return undefined;
  const c = new Columns(row, { runId, table: 'leases' });
  return {
    owner: c.text('lease_owner'),
    host: c.textOrNull('lease_host'),
    pid: c.integerOrNull('lease_pid'),
    epoch: c.integer('lease_epoch'),
    expiresAt: c.time('lease_expires_at'),
  };
}

/**
 * A `timers` row as a timer record.
 *
 * @example
 * const timer = readTimer(timerRow);
 */
export function readTimer(row: Row): TimerRecord {
  const runId = String(row.run_id);
  const c = new Columns(row, { runId, table: 'timers', key: String(row.id) });
  return { runId: c.text('run_id'), id: c.text('id'), at: c.time('at') };
}

/**
 * An `events` row as a stored event.
 *
 * @example
 * const event = readEvent(eventRow, 'r1');
 */
export function readEvent(row: Row, runId: string): StoredEvent {
  const seq = row.seq;
  const c = new Columns(row, {
    runId,
    table: 'events',
    ...(typeof seq === 'number' && { key: seq }),
  });
  return {
    seq: c.integer('seq'),
    at: c.time('at'),
    event: c.text('event'),
    trace: c.textOrNull('trace'),
  };
}

/**
 * A `snapshots` row as `{ seq, data }`.
 *
 * @example
 * const snapshot = readSnapshot(snapshotRow, 'r1');
 */
export function readSnapshot(row: Row, runId: string): { seq: number; data: string } {
  const seq = row.seq;
  const c = new Columns(row, {
    runId,
    table: 'snapshots',
    ...(typeof seq === 'number' && { key: seq }),
  });
  return { seq: c.integer('seq'), data: c.text('data') };
}

/**
 * An `effects` row as an effect record.
 *
 * @example
 * const effect = readEffect(effectRow, 'r1');
 */
export function readEffect(row: Row, runId: string): EffectRecord {
  const c = new Columns(row, { runId, table: 'effects', key: String(row.key) });
  return {
    runId: c.text('run_id'),
    key: c.text('key'),
    result: c.text('result'),
    at: c.time('at'),
  };
}

/**
 * A `waits` row as a wait record.
 *
 * @example
 * const wait = readWait(waitRow, 'r1');
 */
export function readWait(row: Row, runId: string): WaitRecord {
  const c = new Columns(row, { runId, table: 'waits', key: String(row.request_id) });
  return {
    runId: c.text('run_id'),
    requestId: c.text('request_id'),
    node: c.text('node'),
    activation: c.text('activation'),
    request: c.text('request'),
    openedAt: c.time('opened_at'),
    answer: c.textOrNull('answer'),
    answeredBy: c.textOrNull('answered_by'),
    answeredAt: c.timeOrNull('answered_at'),
    closedAt: c.timeOrNull('closed_at'),
  };
}

/**
 * A `memos` row as a memo record; memos belong to a graph, so the error names the run that wrote it.
 *
 * @example
 * const memo = readMemo(memoRow);
 */
export function readMemo(row: Row): MemoRecord {
  const c = new Columns(row, { runId: String(row.run_id), table: 'memos' });
  return {
    graph: c.text('graph'),
    node: c.text('node'),
    nodeVersion: c.integer('node_version'),
    inputHash: c.text('input_hash'),
    output: c.text('output'),
    runId: c.text('run_id'),
    activation: c.text('activation'),
    at: c.time('at'),
  };
}

/**
 * A run's events after `after`, checked to follow each other without a gap and to end at the
 * run's own seq: a missing row, a row past the head or history that stops short of it is
 * damage, reported for that run alone.
 *
 * @example
 * const events = checkHistory(run, rows.map((row) => readEvent(row, run.id)), 0);
 */
export function checkHistory(
  run: Pick<RunRecord, 'id' | 'seq'>,
  events: readonly StoredEvent[],
  after: number,
): readonly StoredEvent[] {
  let expected = after + 1;
  for (const event of events) {
    if (event.seq !== expected || event.seq > run.seq) {
      const why =
        event.seq > run.seq
          ? `its event at seq ${event.seq} is past the run's seq ${run.seq}`
          : `its events jump from seq ${expected - 1} to seq ${event.seq}`;
      throw storeCorrupt(run.id, why, { table: 'events', key: event.seq });
    }
    expected++;
  }
  if (expected - 1 < run.seq) {
    throw storeCorrupt(
      run.id,
      `its events end at seq ${expected - 1}, before the run's seq ${run.seq}: its newest rows are missing`,
      { table: 'events', key: expected },
    );
  }
  return events;
}
