import type { Store } from '../store/store.js';
import { historySuite } from './conformance/history.js';
import { itemsSuite } from './conformance/items.js';
import { limitsSuite } from './conformance/limits.js';
import { listingSuite } from './conformance/listing.js';
import { ownershipSuite } from './conformance/ownership.js';
import { ratesSuite } from './conformance/rates.js';
import { removalSuite } from './conformance/removal.js';
import { schedulesSuite } from './conformance/schedules.js';
import type { Section } from './conformance/section.js';
import { signalsSuite } from './conformance/signals.js';
import { waitsSuite } from './conformance/waits.js';

export { commitSteps, sampleCommit, sampleRun } from './conformance/samples.js';

// The behaviour every Store shares, as one suite a store's own tests run: the memory, SQLite and
// PostgreSQL stores here, and a third party's. It takes the test framework's functions instead
// of importing one, so it runs under vitest or jest alike.

/** What of a test framework the suite uses: vitest's or jest's globals fit. */
export interface TestApi {
  readonly describe: (name: string, body: () => void) => void;
  readonly it: (name: string, body: () => Promise<void>) => void;
  readonly beforeEach: (body: () => Promise<void>) => void;
  readonly afterEach: (body: () => Promise<void>) => void;
  readonly expect: Expect;
}

/** The assertions the suite makes, as vitest's and jest's `expect` both provide them. */
export interface Expect {
  (actual: unknown): Assertion;
  any(type: unknown): unknown;
}

interface Assertion {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toMatchObject(expected: object): void;
  toBeUndefined(): void;
  toBeNull(): void;
  toContain(item: unknown): void;
  toHaveLength(length: number): void;
  readonly not: Assertion;
  readonly rejects: { toMatchObject(expected: object): Promise<void> };
}

/** A test the store does not pass, named, with why: Hono's reasoned skips. */
export interface Skip {
  /** The test's name, as the suite gives it (`it`'s first argument). */
  readonly test: string;
  readonly reason: string;
}

/** Options of {@link storeConformance}. */
export interface ConformanceOptions {
  /** Tests this store skips, each with its reason; a skip naming no test of the suite fails. */
  readonly skip?: readonly Skip[];
}

/** A fresh, empty store and how to dispose of it. */
export interface StoreFixture {
  readonly store: Store;
  cleanup(): Promise<void>;
}

/**
 * The behaviour every `Store` implementation shares: runs and their history, sequence numbers,
 * listing, ownership (leases), timers, effects, waits, memos, memory items, schedules, deleting
 * runs and rate limits. Each test gets a fresh store
 * from `makeStore` and disposes of it with its `cleanup`. A store that cannot pass a test names
 * it in `skip`, with why.
 *
 * @example
 * import { afterEach, beforeEach, describe, expect, it } from 'vitest';
 * import { storeConformance } from 'waymark/testing';
 * storeConformance('MyStore', async () => ({ store: new MyStore(), cleanup: async () => {} }),
 *   { describe, it, beforeEach, afterEach, expect });
 */
export function storeConformance(
  name: string,
  makeStore: () => Promise<StoreFixture>,
  api: TestApi,
  options: ConformanceOptions = {},
): void {
  const { describe, beforeEach, afterEach, expect } = api;
  const skips = new Map((options.skip ?? []).map((s) => [s.test, s.reason]));
  const named = new Set<string>();
  // Every test of the suite goes through here: a skipped one is still named, with its reason.
  const it = (test: string, body: () => Promise<void>) => {
    named.add(test);
    const reason = skips.get(test);
    api.it(
      reason === undefined ? test : `${test} [skipped: ${reason}]`,
      reason === undefined ? body : async () => {},
    );
  };
  describe(`${name} (store conformance)`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ store, cleanup } = await makeStore());
    });
    afterEach(async () => {
      await cleanup();
    });

    // Each part of the suite in its own file (conformance/), over this test's store.
    const section: Section = {
      describe,
      beforeEach,
      it,
      expect,
      get store() {
        return store;
      },
      rejectsWith: (promise, code) => expect(promise).rejects.toMatchObject({ code }),
    };
    historySuite(section);
    listingSuite(section);
    waitsSuite(section);
    ownershipSuite(section);
    itemsSuite(section);
    removalSuite(section);
    limitsSuite(section);
    schedulesSuite(section);
    signalsSuite(section);
    ratesSuite(section);
    it('skips only tests the suite has, each with a reason', async () => {
      expect([...skips.keys()].filter((test) => !named.has(test))).toEqual([]);
      expect([...skips.values()].filter((reason) => reason.trim() === '')).toEqual([]);
    });
  });
}
