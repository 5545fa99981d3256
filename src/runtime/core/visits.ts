import type { Snapshot } from './snapshot.js';

/**
 * The visit-count key of a capped node inside a subgraph, per entry of the child: the entry's id,
 * `>`, the node (`review:1>review/again`); a node name never holds the whole of such a key.
 *
 * @example
 * capKeyOf(['review:1'], 'review/again'); // 'review:1>review/again'
 */
export function capKeyOf(scope: readonly string[], node: string): string {
  return `${scope[scope.length - 1]}>${node}`;
}

/**
 * The visit table without the per-entry cap counts of the child run `scope` ends in (its exit
 * spends them with it); the same table when it holds none.
 *
 * @example
 * withoutCaps({ 'review:1>review/again': 2, plan: 1 }, ['review:1']); // { plan: 1 }
 */
export function withoutCaps(
  visits: Snapshot['visits'],
  scope: readonly string[] | undefined,
): Snapshot['visits'] {
  if (scope === undefined || scope.length === 0) return visits;
  const prefix = capKeyOf(scope, '');
  const keys = Object.keys(visits);
  if (!keys.some((k) => k.startsWith(prefix))) return visits;
  const kept: Record<string, number> = {};
  for (const k of keys) if (!k.startsWith(prefix)) kept[k] = visits[k]!;
  return kept;
}
