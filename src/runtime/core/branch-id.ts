import type { Draft } from './draft.js';
import { setBranch } from './fan-out.js';
import type { BranchRef } from './snapshot.js';

/**
 * The id of a new activation of `node` in a branch: `fanOut[index]/node:n`, counting visits
 * within the branch so that ids do not depend on timing. Counts the visit in the branch.
 *
 * @example
 * branchId(draft, { fanOut: 'triage:1', index: 0 }, 'fix'); // 'triage:1[0]/fix:1'
 */
export function branchId(d: Draft, ref: BranchRef, node: string): string {
  const branch = d.fanOuts[ref.fanOut]!.branches[ref.index]!;
  const visit = (branch.visits[node] ?? 0) + 1;
  if (d.made.has(branch.visits)) {
    (branch.visits as Record<string, number>)[node] = visit;
  } else {
    // Copy then set: a spread with a computed key is a slow path in V8.
    const visits: Record<string, number> = Object.assign({}, branch.visits);
    visits[node] = visit;
    d.made.add(visits);
    setBranch(d, ref, { visits });
  }
  return `${ref.fanOut}[${ref.index}]/${node}:${visit}`;
}
