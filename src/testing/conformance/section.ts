import type { ErrorCode } from '../../error/codes.js';
import type { Store } from '../../store/store.js';
import type { Expect } from '../store-conformance.js';

/** What a part of the store conformance suite is given: the framework's calls and the store. */
export interface Section {
  readonly describe: (name: string, body: () => void) => void;
  /** The suite's `it`: a test the store skips is still named, with its reason. */
  readonly it: (name: string, body: () => Promise<void>) => void;
  readonly beforeEach: (body: () => Promise<void>) => void;
  readonly expect: Expect;
  /** This test's fresh store. */
  readonly store: Store;
  /** Asserts that `promise` rejects with a WaymarkError of `code`. */
  readonly rejectsWith: (promise: Promise<unknown>, code: ErrorCode) => Promise<void>;
}
