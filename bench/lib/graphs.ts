// The benchmark graphs, declared once for waymark and once for LangGraph.js with the same
// shape and the same node bodies: async functions that return a one-field update.
// Each builder also counts node executions, so a scenario can check that every node ran.

import {
  Annotation,
  END as LG_END,
  START as LG_START,
  Send,
  StateGraph,
} from '@langchain/langgraph';
import { z } from 'zod';
import type { CompiledGraph, GraphBuilder } from '../../src/index.js';
import { wm } from './waymark.js';

const { END, append, graph } = wm;

/** Node executions since the last reset; node bodies increment it. */
export const executions = { count: 0 };

// ---------------------------------------------------------------------------------------------
// Linear chain: n0 -> n1 -> ... -> n{size-1} -> END, each node adds 1 to `counter`.

type ChainState = { counter: number };
const ChainSchema = z.object({ counter: z.number() });

export function waymarkChainBuilder(size: number): GraphBuilder<ChainState, string> {
  let b = graph('chain', { state: ChainSchema }) as GraphBuilder<ChainState, string>;
  for (let i = 0; i < size; i++) {
    b = b.node(`n${i}`, async (s) => {
      executions.count++;
      return { counter: s.counter + 1 };
    });
  }
  for (let i = 0; i < size - 1; i++) b = b.edge(`n${i}`, `n${i + 1}`);
  return b.edge(`n${size - 1}`, END).entry('n0');
}

export function waymarkChain(size: number): CompiledGraph<ChainState> {
  return waymarkChainBuilder(size).compile();
}

const LgChainState = Annotation.Root({ counter: Annotation<number> });

/**
 * The same chain in LangGraph.js, declared the way its docs show: one `addNode` and one
 * `addEdge` call per node. Returns the builder so callers can time compile() separately.
 */
export function langgraphChainBuilder(size: number) {
  const b = new StateGraph(LgChainState);
  for (let i = 0; i < size; i++) {
    b.addNode(`n${i}`, async (s: typeof LgChainState.State) => {
      executions.count++;
      return { counter: s.counter + 1 };
    });
  }
  // The builder's node-name type only grows through chaining; the names here are dynamic.
  const edges = b as unknown as StateGraph<
    typeof LgChainState.spec,
    ChainState,
    ChainState,
    string
  >;
  edges.addEdge(LG_START, 'n0');
  for (let i = 0; i < size - 1; i++) edges.addEdge(`n${i}`, `n${i + 1}`);
  edges.addEdge(`n${size - 1}`, LG_END);
  return edges;
}

export function langgraphChain(size: number) {
  return langgraphChainBuilder(size).compile();
}

// ---------------------------------------------------------------------------------------------
// Two-node loop: a -> b -> (a | END); `a` adds 1 to `i`, `b` returns an empty update and its
// router leaves after `iterations` rounds. One round is two node executions.

type LoopState = { i: number };
const LoopSchema = z.object({ i: z.number() });

export function waymarkLoop(iterations: number): CompiledGraph<LoopState> {
  return graph('loop', { state: LoopSchema })
    .node(
      'a',
      async (s) => {
        executions.count++;
        return { i: s.i + 1 };
      },
      { visits: iterations },
    )
    .node('b', async () => {
      executions.count++;
      return {};
    })
    .edge('a', 'b')
    .route('b', (s) => (s.i >= iterations ? END : 'a'), ['a', END])
    .entry('a')
    .compile();
}

const LgLoopState = Annotation.Root({ i: Annotation<number> });

export function langgraphLoop(iterations: number) {
  return langgraphLoopBuilder(iterations).compile();
}

/** The loop before compile(), so a scenario can compile it with a checkpointer. */
export function langgraphLoopBuilder(iterations: number) {
  return new StateGraph(LgLoopState)
    .addNode('a', async (s) => {
      executions.count++;
      return { i: s.i + 1 };
    })
    .addNode('b', async () => {
      executions.count++;
      return {};
    })
    .addEdge(LG_START, 'a')
    .addEdge('a', 'b')
    .addConditionalEdges('b', (s) => (s.i >= iterations ? LG_END : 'a'), ['a', LG_END]);
}

/** LangGraph.js's step limit is 25 by default; both engines get the same generous cap. */
export const stepLimit = 10_000;

// ---------------------------------------------------------------------------------------------
// Map fan-out: start -> one `work` branch per item of `items` -> join -> END. Each branch returns
// `{ out: [item] }` and `out` has an append reducer, so `out` ends as the list of items.

type FanState = { items: number[]; out: number[] };
const FanSchema = z.object({ items: z.array(z.number()), out: z.array(z.number()) });

export function waymarkFanOut(concurrency: number): CompiledGraph<FanState> {
  return graph('fanout', { state: FanSchema, reducers: { out: append } })
    .node('start', async () => ({}))
    .node(
      'work',
      async (_s, ctx) => {
        executions.count++;
        return { out: [ctx.item as number] };
      },
      { writes: ['out'] },
    )
    .node('join', async () => ({}))
    .map('start', { over: 'items', branch: 'work', join: 'join', concurrency })
    .edge('work', 'join')
    .edge('join', END)
    .entry('start')
    .compile();
}

const LgFanState = Annotation.Root({
  items: Annotation<number[]>,
  out: Annotation<number[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

/** The map-reduce of LangGraph.js's docs: a conditional edge returning one `Send` per item. */
export function langgraphFanOut() {
  return (
    new StateGraph(LgFanState)
      .addNode('start', async () => ({}))
      // A Send gives the node its own input, `{ item }`, instead of the graph state.
      .addNode('work', async (input: { item: number }) => {
        executions.count++;
        return { out: [input.item] } as typeof LgFanState.Update;
      })
      .addNode('join', async () => ({}))
      .addEdge(LG_START, 'start')
      .addConditionalEdges('start', (s) => s.items.map((item) => new Send('work', { item })), [
        'work',
      ])
      .addEdge('work', 'join')
      .addEdge('join', LG_END)
      .compile()
  );
}

// ---------------------------------------------------------------------------------------------
// The two-node loop again, for durable runs: `a` also appends one ~20-byte string to `log`
// (append reducer), and after `iterations` rounds `b` routes to `tail`. With `failTail` the
// tail node always throws, so the run stops failed at its last step and can be resumed;
// otherwise it returns `{}` and the run succeeds.

type LogLoopState = { i: number; log: string[] };
const LogLoopSchema = z.object({ i: z.number(), log: z.array(z.string()) });

/** The item `a` appends in round `i`: 20 characters. */
export function logItem(i: number): string {
  return `note ${String(i).padStart(5, '0')} abcdefghi`;
}

/** What the failing tail throws, so a check can tell it from any other failure. */
export const tailFailure = 'the tail node fails on purpose';

export function waymarkLogLoop(
  iterations: number,
  options: { readonly appendLog: boolean; readonly failTail: boolean },
): CompiledGraph<LogLoopState> {
  return graph('log-loop', { state: LogLoopSchema, reducers: { log: append } })
    .node(
      'a',
      async (s) => {
        executions.count++;
        const i = s.i + 1;
        return options.appendLog ? { i, log: [logItem(i)] } : { i };
      },
      { visits: iterations },
    )
    .node('b', async () => {
      executions.count++;
      return {};
    })
    .node('tail', async () => {
      executions.count++;
      if (options.failTail) throw new Error(tailFailure);
      return {};
    })
    .edge('a', 'b')
    .route('b', (s) => (s.i >= iterations ? 'tail' : 'a'), ['a', 'tail'])
    .edge('tail', END)
    .entry('a')
    .compile();
}

const LgLogLoopState = Annotation.Root({
  i: Annotation<number>,
  log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

export function langgraphLogLoopBuilder(
  iterations: number,
  options: { readonly appendLog: boolean; readonly failTail: boolean },
) {
  return new StateGraph(LgLogLoopState)
    .addNode('a', async (s) => {
      executions.count++;
      const i = s.i + 1;
      return options.appendLog ? { i, log: [logItem(i)] } : { i };
    })
    .addNode('b', async () => {
      executions.count++;
      return {};
    })
    .addNode('tail', async () => {
      executions.count++;
      if (options.failTail) throw new Error(tailFailure);
      return {};
    })
    .addEdge(LG_START, 'a')
    .addEdge('a', 'b')
    .addConditionalEdges('b', (s) => (s.i >= iterations ? 'tail' : 'a'), ['a', 'tail'])
    .addEdge('tail', LG_END);
}
