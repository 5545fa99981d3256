import type { Report } from '../diagnostic.js';
import type { FanOutDef, GraphDef, NodeDef } from '../types.js';
import type { Adjacency, Incoming } from './adjacency.js';

/** A fan-out whose nodes all exist, by node index. */
export interface ResolvedFanOut {
  readonly def: FanOutDef;
  readonly from: number;
  readonly entries: readonly number[];
  readonly join: number;
}

/** What the parallel checks read from the structure the main validator built. */
export interface Structure {
  readonly def: GraphDef;
  readonly nodes: readonly NodeDef[];
  readonly exits: Adjacency;
  /** The links into each node, with how each is declared; built on first call. */
  readonly incoming: () => Incoming;
  /** Nodes with an exit straight to END (an edge, a route target, or `terminal`). */
  readonly toEnd: Uint8Array;
  /** The entry node, when it is a declared one. */
  readonly entry: number | undefined;
  readonly report: Report;
}
