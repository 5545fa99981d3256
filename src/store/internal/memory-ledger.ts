import { WaymarkError } from '../../error/waymark-error.js';
import type { EffectRecord, WaitRecord } from '../store.js';
import { waitClosed } from './waits.js';

/** What the ledger reads of a memory store: a run's effects and waits, and its wake-up. */
export interface LedgerHost {
  /** The run's effects and waits. @throws WaymarkError `RUN_NOT_FOUND`. */
  readonly rows: (runId: string) => {
    readonly effects: Map<string, EffectRecord>;
    readonly waits: Map<string, WaitRecord>;
  };
  /** Puts a wake-up for the run in its inbox: a worker continues it. */
  readonly wake: (runId: string, at: number) => void;
}

/**
 * The effects and waits of a memory store's runs, the ledger half of internal/sqlite-ledger.ts:
 * an effect recorded once by key, a wait opened once and answered at most once.
 *
 * @example
 * const ledger = new MemoryLedger({ rows: (id) => runs.get(id)!, wake: (id, at) => queue.arrive(id, null, at, true) });
 */
export class MemoryLedger {
  readonly #host: LedgerHost;

  constructor(host: LedgerHost) {
    this.#host = host;
  }

  async recordEffect(effect: EffectRecord): Promise<EffectRecord> {
    const effects = this.#host.rows(effect.runId).effects;
    const existing = effects.get(effect.key);
    if (existing !== undefined) return existing;
    effects.set(effect.key, effect);
    return effect;
  }

  async getEffect(runId: string, key: string): Promise<EffectRecord | undefined> {
    return this.#host.rows(runId).effects.get(key);
  }

  async listEffects(runId: string): Promise<EffectRecord[]> {
    return [...this.#host.rows(runId).effects.values()].sort(
      (a, b) => a.at - b.at || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
    );
  }

  async openWait(wait: WaitRecord): Promise<void> {
    const waits = this.#host.rows(wait.runId).waits;
    // Opening the same request again (a replayed step) keeps the first record and its answer.
    if (!waits.has(wait.requestId))
      waits.set(wait.requestId, { ...wait, closedAt: wait.closedAt ?? null });
  }

  async answerWait(
    runId: string,
    requestId: string,
    answer: string,
    by: string,
    at: number,
  ): Promise<WaitRecord> {
    const waits = this.#host.rows(runId).waits;
    const wait = waits.get(requestId);
    if (wait === undefined) {
      throw new WaymarkError('WAIT_NOT_FOUND', `run "${runId}" has no wait "${requestId}"`, {
        retryable: false,
      });
    }
    if (wait.answer === null && wait.closedAt) throw waitClosed(runId, requestId);
    if (wait.answer !== null) {
      throw new WaymarkError(
        'WAIT_ALREADY_ANSWERED',
        `wait "${requestId}" of run "${runId}" was answered by ${wait.answeredBy} already`,
        { retryable: false },
      );
    }
    const answered = { ...wait, answer, answeredBy: by, answeredAt: at };
    waits.set(requestId, answered);
    // With its wake-up, as the other stores do in one transaction: any worker continues the run.
    this.#host.wake(runId, at);
    return answered;
  }

  async listWaits(runId: string, options: { readonly open?: boolean } = {}): Promise<WaitRecord[]> {
    const waits = [...this.#host.rows(runId).waits.values()].sort(
      (a, b) => a.openedAt - b.openedAt,
    );
    return options.open === undefined
      ? waits
      : waits.filter((w) => (w.answer === null && !w.closedAt) === options.open);
  }
}
