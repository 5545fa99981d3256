import type Database from 'better-sqlite3';
import { WaymarkError } from '../../error/waymark-error.js';
import type { EffectRecord, RunRecord, WaitRecord } from '../store.js';
import { type Row, readEffect, readWait } from './rows.js';
import type { SqliteQueue } from './sqlite-queue.js';
import type { statements } from './sqlite-sql.js';
import { waitClosed } from './waits.js';

type Statements = { readonly [K in keyof typeof statements]: Database.Statement };

/** What the ledger borrows from its store: its transactions and its run lookup. */
export interface LedgerTransactions {
  write<T>(fn: () => T): T;
  read<T>(fn: () => T): T;
  existing(runId: string): RunRecord;
}

/** A SQLite store's effects and waits: records kept per run, each written in a transaction. */
export class SqliteLedger {
  readonly #sql: Statements;
  readonly #queue: SqliteQueue;
  readonly #tx: LedgerTransactions;

  constructor(sql: Statements, queue: SqliteQueue, tx: LedgerTransactions) {
    this.#sql = sql;
    this.#queue = queue;
    this.#tx = tx;
  }

  recordEffect(effect: EffectRecord): EffectRecord {
    return this.#tx.write(() => {
      this.#tx.existing(effect.runId);
      this.#sql.insertEffect.run({ ...effect });
      return readEffect(this.#sql.getEffect.get(effect.runId, effect.key) as Row, effect.runId);
    });
  }

  getEffect(runId: string, key: string): EffectRecord | undefined {
    return this.#tx.read(() => {
      const row = this.#sql.getEffect.get(runId, key) as Row | undefined;
      if (row !== undefined) return readEffect(row, runId);
      this.#tx.existing(runId);
      return undefined;
    });
  }

  listEffects(runId: string): EffectRecord[] {
    return this.#tx.read(() => {
      this.#tx.existing(runId);
      return (this.#sql.listEffects.all(runId) as Row[]).map((row) => readEffect(row, runId));
    });
  }

  openWait(wait: WaitRecord): void {
    this.#tx.write(() => {
      this.#tx.existing(wait.runId);
      // Opening the same request again (a replayed step) keeps the first record and its answer.
      this.#sql.insertWait.run({ ...wait, closedAt: wait.closedAt ?? null });
    });
  }

  answerWait(runId: string, requestId: string, answer: string, by: string, at: number): WaitRecord {
    const answered = this.#tx.write(() => {
      const row = this.#sql.answerWait.get({ runId, requestId, answer, by, at }) as Row | undefined;
      if (row !== undefined) {
        // With its wake-up, in one transaction: an answer recorded must never wait unseen.
        this.#queue.wakeWithin(runId, at);
        return readWait(row, runId);
      }
      this.#tx.existing(runId);
      const wait = this.#sql.getWait.get(runId, requestId) as Row | undefined;
      if (wait === undefined) {
        throw new WaymarkError('WAIT_NOT_FOUND', `run "${runId}" has no wait "${requestId}"`, {
          retryable: false,
        });
      }
      const record = readWait(wait, runId);
      if (record.answer === null && record.closedAt) throw waitClosed(runId, requestId);
      throw new WaymarkError(
        'WAIT_ALREADY_ANSWERED',
        `wait "${requestId}" of run "${runId}" was answered by ${record.answeredBy} already`,
        { retryable: false },
      );
    });
    this.#queue.toldOfWake();
    return answered;
  }

  listWaits(runId: string, options: { readonly open?: boolean } = {}): WaitRecord[] {
    return this.#tx.read(() => {
      const open = options.open === undefined ? null : Number(options.open);
      const rows = this.#sql.listWaits.all({ runId, open }) as Row[];
      if (rows.length === 0) this.#tx.existing(runId);
      return rows.map((row) => readWait(row, runId));
    });
  }
}
