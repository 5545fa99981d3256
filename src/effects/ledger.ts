import { WaymarkError } from '../error/waymark-error.js';
import type { Store } from '../store/store.js';

/**
 * Where the results of a run's effects are recorded, by idempotency key. Backed by the run's
 * store when it has one, else by memory for the life of the run.
 */
export interface EffectLedger {
  /** The recorded result (JSON) of a key, if any. */
  get(key: string): Promise<string | undefined>;
  /** Records a result unless the key has one already; returns the result that stands. */
  record(key: string, result: string): Promise<string>;
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

/** A ledger over a store's effect records for one run. */
export function storeLedger(store: Store, runId: string, now: () => number): EffectLedger {
  return {
    get: async (key) => (await store.getEffect(runId, key))?.result,
    record: async (key, result) =>
      (await store.recordEffect({ runId, key, result, at: now() })).result,
  };
}

/** A ledger that lives as long as the run object that holds it. */
export function memoryLedger(): EffectLedger {
  const results = new Map<string, string>();
  return {
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
): Promise<T> {
  const recorded = await ledger.get(key);
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
  return JSON.parse(await ledger.record(key, json)) as T;
}
