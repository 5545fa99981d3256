import { WaymarkError } from '../error/waymark-error.js';
import type { CompiledGraph } from '../graph/compiled.js';
import type { RunResult } from '../runtime/run-types.js';
import type { StreamEvent } from '../runtime/watch/stream.js';
import type { RunRecord, Store } from '../store/store.js';
import { LiveEvents } from './live-events.js';

/** What every route of the API works with: the store, the graphs served, the runs in flight. */
export interface ApiContext {
  readonly store: Store;
  /** The graphs served. */
  graphs(): Iterable<CompiledGraph>;
  /** A graph the server has, by name; GRAPH_NOT_SERVED otherwise. */
  graphNamed(name: string): CompiledGraph;
  /** The labels a run the API starts of `graph` is recorded with: `{ labels }`, or nothing. */
  labelsFor(graph: CompiledGraph): { readonly labels?: Readonly<Record<string, string>> };
  /** A stored run and its graph; RUN_NOT_FOUND or GRAPH_NOT_SERVED otherwise. */
  runAndGraph(runId: string): Promise<[RunRecord, CompiledGraph]>;
  /**
   * Starts a run's move in this process and resolves once its first step is recorded (or it
   * refused, which the request then reports): the run goes on after the response.
   */
  launch(
    runId: string,
    move: (watcher: (event: StreamEvent) => void, drain: Drain) => Promise<RunResult>,
  ): Promise<void>;
  /**
   * Gives back every run moving here, unfinished and resumable (each may finish the nodes it
   * runs within the drain's grace), and resolves when every move launched has stopped.
   */
  drain(): Promise<void>;
  /** The ephemeral events of the runs launched here, for their SSE clients. */
  readonly live: LiveEvents;
  /**
   * A stream being served: its signal aborts when the client goes or the server stops; `end()`
   * once it has stopped reading the store.
   */
  openStream(): { readonly signal: AbortSignal; end(): void };
  /** Stops every stream being served and waits until none reads the store. */
  stopStreams(): Promise<void>;
}

/** The run options every move launched gets: what gives it back when the server stops. */
export interface Drain {
  readonly drain: AbortSignal;
  readonly drainGraceMs: number;
}

/** How long the runs a server drives may take to finish their nodes when it stops, by default. */
export const defaultServeGraceMs = 5_000;

/** The context of an API over `store` serving `graphs`. */
export function apiContext(
  store: Store,
  served: readonly CompiledGraph[],
  onBackground?: (runId: string, outcome: RunResult | unknown) => void,
  graceMs = defaultServeGraceMs,
  runLabels?: (graph: CompiledGraph) => Readonly<Record<string, string>> | undefined,
): ApiContext {
  const graphs = new Map(served.map((g) => [g.name, g]));
  const stopping = new AbortController();
  const drain: Drain = { drain: stopping.signal, drainGraceMs: graceMs };
  const inFlight = new Set<Promise<unknown>>();
  const live = new LiveEvents();
  const streams = new Map<AbortController, Promise<void>>();
  const graphNamed = (name: string): CompiledGraph => {
    const graph = graphs.get(name);
    if (graph === undefined) {
      throw new WaymarkError(
        'GRAPH_NOT_SERVED',
        `this server has no graph "${name}"; it serves ${[...graphs.keys()].map((n) => `"${n}"`).join(', ') || 'none'}`,
        { retryable: false, details: { graph: name } },
      );
    }
    return graph;
  };
  return {
    store,
    live,
    graphs: () => graphs.values(),
    graphNamed,
    labelsFor(graph) {
      const labels = runLabels?.(graph);
      return labels === undefined ? {} : { labels };
    },
    async runAndGraph(runId) {
      const record = await store.getRun(runId);
      if (record === undefined) {
        throw new WaymarkError('RUN_NOT_FOUND', `there is no run "${runId}"`, { retryable: false });
      }
      return [record, graphNamed(record.graph)];
    },
    launch: (runId, move) =>
      new Promise((resolve, reject) => {
        let started = false;
        const start = () => {
          if (started) return;
          started = true;
          resolve();
        };
        const moving = move((event) => {
          start();
          if (event.type === 'delta' || event.type === 'heartbeat') live.publish(event);
        }, drain).then(
          (result) => {
            start();
            onBackground?.(runId, result);
          },
          (error: unknown) => {
            if (started) onBackground?.(runId, error);
            else reject(error);
          },
        );
        inFlight.add(moving);
        void moving.finally(() => inFlight.delete(moving));
      }),
    async drain() {
      stopping.abort();
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
    openStream() {
      const stop = new AbortController();
      let end = () => {};
      streams.set(
        stop,
        new Promise<void>((resolve) => {
          end = resolve;
        }),
      );
      return {
        signal: stop.signal,
        end: () => {
          streams.delete(stop);
          end();
        },
      };
    },
    async stopStreams() {
      for (const stop of streams.keys()) stop.abort();
      await Promise.all(streams.values());
    },
  };
}
