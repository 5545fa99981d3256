// Types of graphs.mjs, for the TypeScript side of the bench.
import type * as Waymark from '../../../src/index.js';

export type BenchState = {
  items: number[];
  out: number[];
  holdMs: number;
};

export type BenchGraph = Waymark.CompiledGraph<BenchState, Partial<BenchState>>;

/** A line a timed node wrote: its activation started or ended at `ns` (CLOCK_MONOTONIC). */
export interface Told {
  readonly what: 'start' | 'end';
  readonly runId: string;
  readonly activation: string;
  readonly ns: bigint;
}

export declare function tell(what: 'start' | 'end', ctx: Waymark.NodeContext): void;
export declare function told(line: string): Told | undefined;
export declare const chainLength: number;
export declare const fanWidth: number;
export declare const fanNodeMs: number;
export declare const wideWidths: readonly [number, number];
export type BenchGraphName = 'one' | 'chain10' | 'fan100' | 'map100' | 'map1000' | 'pair' | 'hold';
/** The `nap` graph's state: the time (ms since the epoch) its sleep wakes. */
export type NapState = { wakeAt: number };
export type NapGraph = Waymark.CompiledGraph<NapState, Partial<NapState>>;
/** The state of the cue graph: when its signal was sent, by process.hrtime.bigint(). */
export interface CueState {
  sentNs: string;
}
export type CueGraph = Waymark.CompiledGraph<CueState, Partial<CueState>>;
/** The state of the metered graph: one rate-limited call. */
export interface MeteredState {
  n: number;
}
export type MeteredGraph = Waymark.CompiledGraph<MeteredState, Partial<MeteredState>>;
export declare function benchGraphs(waymark: typeof Waymark): Record<BenchGraphName, BenchGraph> & {
  readonly nap?: NapGraph;
  readonly cue?: CueGraph;
  readonly metered?: MeteredGraph;
};
