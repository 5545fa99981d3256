import type { Adjacency } from './adjacency.js';

/** An edge that names an unknown node, and the declared node it was most likely meant for. */
export interface Misnamed {
  readonly from: number;
  readonly meant: number;
}

/**
 * For each node the entry cannot reach: the index of the misnamed edge it is unreachable
 * because of, or -1 when fixing every misnamed edge would still leave it unreachable (it is
 * unreachable for a reason of its own). The walk from the entry goes on from each misnamed
 * edge's meant node, as if the name were fixed, claiming the nodes only it reaches; an edge
 * whose source is itself claimed joins the walk when that source is. Each node is claimed at
 * most once, so the cost is linear in nodes + edges; ties go to the edge declared first.
 */
export function blame(
  misnamed: readonly Misnamed[],
  reachable: Uint8Array,
  exits: Adjacency,
): Int32Array {
  const { start, next } = exits;
  const owner = new Int32Array(reachable.length).fill(-1);
  const waiting = new Map<number, number[]>();
  const queue: number[] = [];
  misnamed.forEach((m, k) => {
    if (reachable[m.from]) queue.push(k);
    else {
      const list = waiting.get(m.from);
      if (list === undefined) waiting.set(m.from, [k]);
      else list.push(k);
    }
  });
  const walk: number[] = [];
  for (let head = 0; head < queue.length; head++) {
    const k = queue[head]!;
    const first = misnamed[k]!.meant;
    if (reachable[first] || owner[first] !== -1) continue;
    owner[first] = k;
    walk.length = 0;
    walk.push(first);
    for (let h = 0; h < walk.length; h++) {
      const v = walk[h]!;
      for (const later of waiting.get(v) ?? []) queue.push(later);
      for (let e = start[v]!; e < start[v + 1]!; e++) {
        const w = next[e]!;
        if (reachable[w] || owner[w] !== -1) continue;
        owner[w] = k;
        walk.push(w);
      }
    }
  }
  return owner;
}
