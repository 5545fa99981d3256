/**
 * Directed edges between node indexes in compressed rows: the successors of node v are
 * `next[start[v]]` .. `next[start[v + 1] - 1]`, in the order they were added. Two typed arrays
 * instead of one array per node: a 10,000-node graph is walked without 20,000 small allocations.
 */
export interface Adjacency {
  readonly start: Int32Array;
  readonly next: Int32Array;
}

/** Collects edges in any order, then compresses them (a stable counting sort by source). */
export class EdgeCollector {
  readonly #from: number[] = [];
  readonly #to: number[] = [];

  add(from: number, to: number): void {
    this.#from.push(from);
    this.#to.push(to);
  }

  compress(n: number): Adjacency {
    return rows(n, this.#from, this.#to);
  }
}

/** The same edges, pointing the other way. */
export function reverse(adjacency: Adjacency): Adjacency {
  const n = adjacency.start.length - 1;
  const from: number[] = [];
  const to: number[] = [];
  for (let v = 0; v < n; v++) {
    for (let k = adjacency.start[v]!; k < adjacency.start[v + 1]!; k++) {
      from.push(adjacency.next[k]!);
      to.push(v);
    }
  }
  return rows(n, from, to);
}

function rows(n: number, from: readonly number[], to: readonly number[]): Adjacency {
  const start = new Int32Array(n + 1);
  for (const f of from) start[f + 1]!++;
  for (let v = 0; v < n; v++) start[v + 1]! += start[v]!;
  const fill = start.slice(0, n);
  const next = new Int32Array(to.length);
  for (let e = 0; e < from.length; e++) next[fill[from[e]!]!++] = to[e]!;
  return { start, next };
}
