import type { JoinPolicy } from './types.js';

/** A `best` policy as declared: the score function stays beside the plain-data policy. */
export interface BestPolicy<S> {
  readonly kind: 'best';
  readonly score: (branchState: Readonly<S>) => number;
}

/** What a join node's `join` option accepts. */
export type JoinPolicyInput<S> = Exclude<JoinPolicy, { kind: 'best' }> | BestPolicy<S>;

/**
 * Join policy: wait for every dispatched branch and merge every success in branch order.
 *
 * @example
 * .node('merge', merge, { join: all(), tolerate: 1 })
 */
export function all(): { readonly kind: 'all' } {
  return { kind: 'all' };
}

/**
 * Join policy: the first branch to succeed wins; the others are cancelled through their signal.
 *
 * @example
 * .node('fastest', pick, { join: any() })
 */
export function any(): { readonly kind: 'any' } {
  return { kind: 'any' };
}

/**
 * Join policy: the first `k` branches to succeed win and are merged in branch order; the rest
 * are cancelled.
 *
 * @example
 * .node('agree', tally, { join: quorum(2) })
 */
export function quorum(k: number): { readonly kind: 'quorum'; readonly k: number } {
  return { kind: 'quorum', k };
}

/**
 * Join policy: wait for every branch, keep the success whose branch state scores highest
 * (the lowest branch index wins a tie).
 *
 * @example
 * .node('pick', pick, { join: best((s) => s.confidence) })
 */
export function best<S>(score: (branchState: Readonly<S>) => number): BestPolicy<S> {
  return { kind: 'best', score };
}

/**
 * Join policy: wait for every branch like `all()`, then merge the branches' patches three-way
 * against their base with git's merge machinery; the merged tree is the join node's workspace
 * (it must declare one, with the branches' patch field). A conflict fails the join node with
 * `MERGE_CONFLICT`, listing the files and hunks, routed through its `onError` like any failure.
 *
 * @example
 * .node('merge', check, { join: patches(), workspace: { repo, patch: 'code' }, onError: 'resolve' })
 */
export function patches(): { readonly kind: 'patches' } {
  return { kind: 'patches' };
}
