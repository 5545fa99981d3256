import { createHash } from 'node:crypto';
import type { CompiledGraph, RuntimeNode } from '../../graph/compiled.js';
import { withoutUntracked } from '../../graph/untracked.js';
import type { MemoStore } from '../../store/store.js';
import { parse, stringify } from '../codec/values.js';
import { callUser } from '../core/call-user.js';
import { deepFreeze } from '../core/freeze.js';
import type { Activation } from '../core/snapshot.js';
import type { Attempt } from './execute.js';

// A node's `cache` (LangGraph.js: CachePolicy): outputs reused across runs for a time to live,
// kept as memos in the run's store, so every process that shares the store shares the cache.
// Both hosts go through here: the in-process executor and a worker's attempt.

/**
 * The key an activation of a cached node is cached under: its `key(state)` function's, or its
 * input hash. Undefined when the node is not cached, or has no key this time (a key function
 * that throws or does not return a string: the node just runs).
 *
 * @example
 * const key = cacheKeyOf(node, state, inputHash); // 'lookup@1#...'
 */
export function cacheKeyOf(
  node: RuntimeNode,
  state: unknown,
  inputHash: string | undefined,
): string | undefined {
  if (node.def.cache === undefined) return undefined;
  const keyOf = node.cacheKey;
  if (keyOf === undefined) return inputHash;
  const called = callUser(() => keyOf(state));
  if (!called.ok || typeof called.value !== 'string') return undefined;
  const digest = createHash('sha256').update(called.value).digest('base64url');
  return `${node.def.name}@${node.def.version}#key:${digest}`;
}

/**
 * The attempt of a cache hit: the output recorded under `key` less than the node's `ttlMs` ago,
 * as a completion marked reused (the trace shows it as one). Undefined on a miss, or when the
 * store cannot say: a cache that cannot be read is a miss, never a failure.
 */
export async function cachedAttempt(
  store: MemoStore,
  graph: CompiledGraph,
  node: RuntimeNode,
  activation: Activation,
  key: string,
  now: number,
): Promise<Attempt | undefined> {
  const ttlMs = node.def.cache!.ttlMs;
  let update: unknown;
  try {
    const memo = await store.findMemo(graph.name, node.def.name, node.def.version, key);
    if (memo === undefined || now - memo.at > ttlMs) return undefined;
    update = deepFreeze(parse(memo.output));
  } catch {
    return undefined;
  }
  return reusedAttempt(activation, update, key, now);
}

/** The attempt of an activation that takes a recorded output instead of running (`reused`). */
export function reusedAttempt(
  activation: Activation,
  update: unknown,
  key: string,
  now: number,
): Attempt {
  return {
    event: {
      type: 'completed',
      activation: activation.id,
      attempt: activation.attempt,
      update,
      inputHash: key,
      reused: true,
    },
    startedAt: now,
    endedAt: now,
    reused: true,
  };
}

/**
 * Records a completed attempt's output under `key` for later runs. A write that fails is let
 * go: the run does not depend on its cache.
 */
export async function remember(
  store: MemoStore,
  graph: CompiledGraph,
  node: RuntimeNode,
  key: string,
  attempt: Attempt,
  runId: string,
): Promise<void> {
  const { event } = attempt;
  if (event.type !== 'completed' || attempt.reused === true) return;
  try {
    await store.putMemo({
      graph: graph.name,
      node: node.def.name,
      nodeVersion: node.def.version,
      inputHash: key,
      // An untracked field is never stored: a hit sets only the tracked fields of the output.
      output: stringify(
        (graph.untracked === undefined
          ? event.update
          : withoutUntracked(graph.untracked, event.update)) ?? null,
        graph,
      ),
      runId,
      activation: event.activation,
      at: attempt.endedAt,
    });
  } catch {
    // The output is in the run's history anyway; only a later run's hit is lost.
  }
}
