import type Database from 'better-sqlite3';
import type {
  EventWait,
  SignalFilter,
  SignalRecord,
  SignalSent,
  SignalStore,
} from '../signal-store.js';
import type { Row } from './rows.js';
import { readSignal, signalParams } from './signal-rows.js';
import type { SqliteQueue } from './sqlite-queue.js';

const sql = {
  insert: `INSERT INTO signals (id, graph, run_id, key, name, payload, sent_at, expires_at,
      consumed_run, consumed_wait, consumed_at)
    VALUES (@id, @graph, @runId, @key, @name, @payload, @sentAt, @expiresAt, NULL, NULL, NULL)
    ON CONFLICT (id) DO NOTHING RETURNING *`,
  get: 'SELECT * FROM signals WHERE id = ?',
  // The open event wait a signal is for, first opened first: to its run, or under its key.
  listener: `SELECT l.run_id, l.request_id FROM signal_waits l
      JOIN waits w ON w.run_id = l.run_id AND w.request_id = l.request_id
    WHERE l.graph = @graph AND l.name = @name AND w.answer IS NULL AND w.closed_at IS NULL
      AND CASE WHEN @runId IS NOT NULL THEN l.run_id = @runId ELSE l.key IS @key END
    ORDER BY w.opened_at, l.rowid LIMIT 1`,
  listen: `INSERT INTO signal_waits (run_id, request_id, graph, name, key)
    VALUES (@runId, @requestId, @graph, @name, @key) ON CONFLICT DO NOTHING`,
  unlisten: 'DELETE FROM signal_waits WHERE run_id = ? AND request_id = ?',
  // The oldest kept signal a wait takes.
  kept: `SELECT * FROM signals
    WHERE graph = @graph AND name = @name AND consumed_at IS NULL AND expires_at > @at
      AND (run_id = @runId OR (run_id IS NULL AND key IS @key))
    ORDER BY sent_at, id LIMIT 1`,
  answer: `UPDATE waits SET answer = @answer, answered_by = @by, answered_at = @at
    WHERE run_id = @runId AND request_id = @requestId AND answer IS NULL AND closed_at IS NULL
    RETURNING run_id`,
  consume: `UPDATE signals SET consumed_run = @runId, consumed_wait = @requestId, consumed_at = @at
    WHERE id = @id AND consumed_at IS NULL RETURNING *`,
  list: `SELECT * FROM signals
    WHERE (@graph IS NULL OR graph = @graph) AND (@runId IS NULL OR run_id = @runId)
      AND (@state IS NULL
        OR (@state = 'consumed' AND consumed_at IS NOT NULL)
        OR (@state = 'kept' AND consumed_at IS NULL AND expires_at > @at)
        OR (@state = 'expired' AND consumed_at IS NULL AND expires_at <= @at))
    ORDER BY sent_at, id`,
  expire: 'DELETE FROM signals WHERE consumed_at IS NULL AND expires_at <= ?',
} as const;

type Statements = { readonly [K in keyof typeof sql]: Database.Statement };

/** What the signals borrow from their store: its transactions, its queue, its clock. */
export interface SignalHost {
  write<T>(fn: () => T): T;
  read<T>(fn: () => T): T;
  readonly queue: SqliteQueue;
  now(): number;
}

/**
 * A SQLite store's signals. Each delivery is one write transaction (BEGIN IMMEDIATE: writers
 * of one file go one at a time), so a signal and a wait that opens meanwhile never miss each other.
 *
 * @example
 * const signals = new SqliteSignals(db, { write, read, queue, now });
 */
export class SqliteSignals implements SignalStore {
  readonly #sql: Statements;
  readonly #host: SignalHost;

  constructor(db: Database.Database, host: SignalHost) {
    this.#sql = Object.fromEntries(
      Object.entries(sql).map(([name, text]) => [name, db.prepare(text)]),
    ) as unknown as Statements;
    this.#host = host;
  }

  async sendSignal(signal: SignalRecord): Promise<SignalSent> {
    const sent = this.#host.write((): SignalSent => {
      const inserted = this.#sql.insert.get(signalParams(signal)) as Row | undefined;
      if (inserted === undefined) {
        const standing = readSignal(this.#sql.get.get(signal.id) as Row);
        return { outcome: 'duplicate', signal: standing };
      }
      const delivered = this.#toListener(signal, signal.sentAt);
      return delivered === undefined
        ? { outcome: 'kept', signal }
        : { outcome: 'delivered', signal: delivered };
    });
    if (sent.outcome === 'delivered') this.#host.queue.toldOfWake();
    return sent;
  }

  async matchSignal(wait: EventWait, at: number): Promise<SignalRecord | undefined> {
    const got = this.#host.write(() => {
      this.#sql.listen.run({ ...wait });
      const kept = this.#sql.kept.get({ ...wait, at }) as Row | undefined;
      return kept === undefined ? undefined : this.#deliver(readSignal(kept), wait, at);
    });
    if (got !== undefined) this.#host.queue.toldOfWake();
    return got;
  }

  async redeliverSignal(id: string, at: number): Promise<SignalRecord | undefined> {
    const got = this.#host.write(() => {
      const row = this.#sql.get.get(id) as Row | undefined;
      if (row === undefined) return undefined;
      const signal = readSignal(row);
      if (signal.consumedAt !== null || signal.expiresAt <= at) return undefined;
      return this.#toListener(signal, at);
    });
    if (got !== undefined) this.#host.queue.toldOfWake();
    return got;
  }

  async listSignals(filter: SignalFilter = {}): Promise<SignalRecord[]> {
    return this.#host.read(() =>
      (
        this.#sql.list.all({
          graph: filter.graph ?? null,
          runId: filter.runId ?? null,
          state: filter.state ?? null,
          at: filter.at ?? this.#host.now(),
        }) as Row[]
      ).map(readSignal),
    );
  }

  async expireSignals(at: number): Promise<number> {
    return this.#host.write(() => this.#sql.expire.run(at).changes);
  }

  /** Inside a write: delivers the signal to the open wait listening for it, if one is. */
  #toListener(signal: SignalRecord, at: number): SignalRecord | undefined {
    const found = this.#sql.listener.get({
      graph: signal.graph,
      name: signal.name,
      runId: signal.runId,
      key: signal.key,
    }) as Row | undefined;
    if (found === undefined) return undefined;
    const wait: EventWait = {
      runId: String(found.run_id),
      requestId: String(found.request_id),
      graph: signal.graph,
      name: signal.name,
      key: signal.key,
    };
    return this.#deliver(signal, wait, at);
  }

  /** Inside a write: the wait's answer, the signal's consumption and the run's wake-up. */
  #deliver(signal: SignalRecord, wait: EventWait, at: number): SignalRecord | undefined {
    const { runId, requestId } = wait;
    const by = `signal:${signal.id}`;
    const answered = this.#sql.answer.get({ runId, requestId, answer: signal.payload, by, at });
    if (answered === undefined) return undefined;
    const consumed = this.#sql.consume.get({ id: signal.id, runId, requestId, at }) as Row;
    this.#sql.unlisten.run(runId, requestId);
    this.#host.queue.wakeWithin(runId, at);
    return readSignal(consumed);
  }
}
