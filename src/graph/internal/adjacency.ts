/**
 * Directed edges between node indexes in compressed rows: the successors of node v are
 * `next[start[v]]` .. `next[start[v + 1] - 1]`, in the order they were added. Two typed arrays
 * instead of one array per node: a 10,000-node graph is walked without 20,000 small allocations.
 */
export interface Adjacency {
  readonly start: Int32Array;
  readonly next: Int32Array;
}

/** How a link between two nodes is declared: the diagnostics about a link name it. */
export type Via = 'edge' | 'route' | 'fanOut' | 'onError';

/**
 * The links into each node with how each is declared: the sources of the links into node v are
 * `from[start[v]]` .. `from[start[v + 1] - 1]`, each declared as `via[k]`.
 */
export interface Incoming {
  readonly start: Int32Array;
  readonly from: Int32Array;
  readonly via: readonly Via[];
}

/** Collects edges in any order, then compresses them (a stable counting sort by source). */
export class EdgeCollector {
  readonly #from: number[] = [];
  readonly #to: number[] = [];
  readonly #via: Via[] = [];

  add(from: number, to: number, via: Via): void {
    this.#from.push(from);
    this.#to.push(to);
    this.#via.push(via);
  }

  compress(n: number): Adjacency {
    return rows(n, this.#from, this.#to);
  }

  /** The links grouped by target, in the order they were added. */
  incoming(n: number): Incoming {
    const start = new Int32Array(n + 1);
    for (const t of this.#to) start[t + 1]!++;
    for (let v = 0; v < n; v++) start[v + 1]! += start[v]!;
    const fill = start.slice(0, n);
    const from = new Int32Array(this.#to.length);
    const via = new Array<Via>(this.#to.length);
    for (let e = 0; e < this.#to.length; e++) {
      const k = fill[this.#to[e]!]!++;
      from[k] = this.#from[e]!;
      via[k] = this.#via[e]!;
    }
    return { start, from, via };
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
