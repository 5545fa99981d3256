// The benchmark graphs, declared once for waymark and once for LangGraph.js with the same
// shape and the same node bodies: async functions that return a one-field update.
// Each builder also counts node executions, so a scenario can check that every node ran.

import { Annotation, END as LG_END, START as LG_START, StateGraph } from '@langchain/langgraph';
import { z } from 'zod';
import type { CompiledGraph, GraphBuilder } from '../../src/index.js';
import { wm } from './waymark.js';

const { END, graph } = wm;

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
    .addConditionalEdges('b', (s) => (s.i >= iterations ? LG_END : 'a'), ['a', LG_END])
    .compile();
}

/** LangGraph.js's step limit is 25 by default; both engines get the same generous cap. */
export const stepLimit = 10_000;
