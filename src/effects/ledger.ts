import { isWaymarkError, WaymarkError } from '../error/waymark-error.js';
import type { ItemStore, Store } from '../store/store.js';

/**
 * Where the results of a run's effects are recorded, by idempotency key. Backed by the run's
 * store when it has one, else by memory for the life of the run.
 */
export interface EffectLedger {
  /** The memory items `ctx.memory` reads, and writes as effects of this ledger: the run's store's. */
  readonly items: ItemStore;
  /** The recorded result (JSON) of a key, if any. `signal`: the attempt's, which ends waiting. */
  get(key: string, signal?: AbortSignal): Promise<string | undefined>;
  /** Records a result unless the key has one already; returns the result that stands. */
  record(key: string, result: string, signal?: AbortSignal): Promise<string>;
}

/**
 * The idempotency key of an effect: the run, the activation and the effect's name. Stable
 * across attempts and resumes (activation ids are), and distinct for every other intent.
 *
 * @example
 * effectKey('run-1', 'publish:1', 'post') // 'run-1/publish:1/post'
 */
export function effectKey(runId: string, activationId: string, name: string): string {
  return `${runId}/${activationId}/${name}`;
}

// A store that cannot be reached for a moment (a connection killed, a server restarting, a
// lock not free) is asked again after 50, 100, 200 ... ms, up to 2 s between tries.
const backoffMs = 50;
const backoffCapMs = 2_000;

/**
 * A ledger over a store's effect records for one run. A store error that passes (retryable) is
 * not the node's failure: the same read or record is taken again after a pause, for as long as
 * the attempt lives (its signal aborts when the run stops or its lease is lost). A record taken
 * again after its first write landed finds that write: the key keeps one result.
 */
export function storeLedger(store: Store, runId: string, now: () => number): EffectLedger {
  return {
    items: store,
    get: (key, signal) =>
      patiently(async () => (await store.getEffect(runId, key))?.result, signal),
    record: (key, result, signal) =>
      patiently(
        async () => (await store.recordEffect({ runId, key, result, at: now() })).result,
        signal,
      ),
  };
}

async function patiently<T>(call: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  for (let failures = 0; ; failures++) {
    try {
      return await call();
    } catch (error) {
      const passing = isWaymarkError(error) && error.code.startsWith('STORE_') && error.retryable;
      if (!passing || isAborted(signal)) throw error;
      await pause(Math.min(backoffCapMs, backoffMs * 2 ** failures), signal);
      if (isAborted(signal)) throw error;
    }
  }
}

function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}

/** A ledger that lives as long as the run object that holds it, with `items` for memory. */
export function memoryLedger(items: ItemStore): EffectLedger {
  const results = new Map<string, string>();
  return {
    items,
    get: async (key) => results.get(key),
    record: async (key, result) => {
      const standing = results.get(key);
      if (standing !== undefined) return standing;
      results.set(key, result);
      return result;
    },
  };
}

/**
 * Performs an effect at most once per key as far as the ledger knows: returns the recorded
 * result if there is one, else calls `fn(key)` and records what it returns at once. A crash
 * between the call and the record repeats the call with the same key on resume; the receiver
 * dedupes on it: at-least-once delivery with a stable key, which is effectively once.
 */
export async function performEffect<T>(
  ledger: EffectLedger,
  key: string,
  fn: (key: string) => T | Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  const recorded = await ledger.get(key, signal);
  if (recorded !== undefined) return JSON.parse(recorded) as T;
  const result = await fn(key);
  let json: string | undefined;
  try {
    json = JSON.stringify(result === undefined ? null : result);
  } catch (cause) {
    throw new WaymarkError(
      'EFFECT_RESULT_INVALID',
      `effect "${key}" returned a value that is not JSON`,
      {
        retryable: false,
        cause,
      },
    );
  }
  // Whatever stands in the ledger is the answer, also when a concurrent attempt recorded first.
  return JSON.parse(await ledger.record(key, json, signal)) as T;
}
