import type { NodeOptions } from './builder-options.js';
import { kindTraits, type NodeKind } from './kinds.js';
import type { RetryOptions } from './types.js';

/**
 * The node options a graph can set once for all its nodes: see `GraphOptions.nodeDefaults`.
 *
 * @example
 * graph('agent', { state: State, nodeDefaults: { retry: { attempts: 3, backoffMs: 500 }, timeoutMs: 30_000 } })
 */
export interface NodeDefaults {
  readonly retry?: RetryOptions;
  readonly timeoutMs?: number;
  readonly visits?: number;
  readonly exec?: readonly string[];
}

// Defaults become each node's own data, so the structural hash, the validator and every reader of
// the def see them as if written on the node. Attempt-only options go only where there are
// attempts: a retry on a person node would be refused, not ignored.
export function withDefaults<S, W extends keyof S & string>(
  options: NodeOptions<S, W>,
  defaults: NodeDefaults,
  kind: NodeKind,
): NodeOptions<S, W> {
  if (typeof defaults !== 'object' || defaults === null) return options;
  const attempts = Object.hasOwn(kindTraits, kind) && kindTraits[kind].retryable;
  return {
    ...(defaults.visits !== undefined && { visits: defaults.visits }),
    ...(attempts && defaults.retry !== undefined && { retry: defaults.retry }),
    ...(attempts && defaults.timeoutMs !== undefined && { timeoutMs: defaults.timeoutMs }),
    ...(attempts && defaults.exec !== undefined && { exec: defaults.exec }),
    ...options,
  };
}
