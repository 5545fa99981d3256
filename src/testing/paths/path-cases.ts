import { permanentError } from '../../error/waymark-error.js';
import type { CompiledGraph, RuntimeNode } from '../../graph/compiled.js';
import { declaredName } from '../../graph/subgraph.js';
import type { NodeFn } from '../../graph/types.js';
import { resume } from '../../runtime/local/resume.js';
import { run } from '../../runtime/local/run.js';
import { answer } from '../../runtime/ops/answer.js';
import { inspect } from '../../runtime/ops/inspect.js';
import type { RunResult } from '../../runtime/run-types.js';
import { MemoryStore } from '../../store/memory-store.js';
import type { Store } from '../../store/store.js';
import { type GraphPath, type GraphPathOptions, graphPaths, type PathStep } from './paths.js';

/**
 * What the scripted nodes of a path return, by decision: `'route verify -> publish'` is the
 * update `verify` returns when the path routes it to `publish` (what makes its router choose
 * that), `'node plan'` what `plan` returns wherever it runs otherwise (default `{}`), and
 * `'wait approve'` the answer given to the person `approve` (a person's route entry, when the
 * script has one, is the answer that takes that route). A path's `error` steps need no
 * entry: the node throws a permanent error.
 */
export type PathScript = Readonly<Record<string, unknown>>;

/** One generated test case: a path, and a run that follows it with scripted node outputs. */
export interface PathCase {
  readonly name: string;
  readonly path: GraphPath;
  /** Runs the case (run `path-<n>` of the options' store); resolves with what happened, never throws for a detour. */
  run(): Promise<PathOutcome>;
}

/** What a path case's run did, and whether it took the path. */
export interface PathOutcome {
  readonly ok: boolean;
  /** The nodes the run took, the path's way (fan-out branches left out). */
  readonly took: readonly string[];
  /** Why it is not ok: where the run left the path, and which script entry would steer it. */
  readonly message?: string;
  readonly result: RunResult<Record<string, unknown>>;
}

/** Options of {@link pathCases}. */
export interface PathCaseOptions extends GraphPathOptions {
  /** The run's input. Default `{}`. */
  readonly input?: Readonly<Record<string, unknown>>;
  /** `shortest` (the default): one case per node and item the paths reach; `all`: every path. */
  readonly cases?: 'shortest' | 'all';
  /**
   * Where the cases run, each as run `path-<n>`: give one store to read them all back after
   * (`graphCoverage(graph).record(store)`). Default: a fresh MemoryStore per case.
   */
  readonly store?: Store;
}

/**
 * One test case per path of a graph (docs/testing.md "Paths"), each running a copy of the graph
 * whose node bodies return the script's outputs: the routers are the graph's own, so a case
 * checks that the outputs a path expects make the routers take it. Bodies, models and tools are
 * never called; the copy keeps the graph's hash, so nothing else about the run differs.
 *
 * @example
 * for (const c of pathCases(triage, script)) it(c.name, async () => expect((await c.run()).ok).toBe(true));
 */
export function pathCases(
  graph: CompiledGraph<never, never> | CompiledGraph,
  script: PathScript,
  options: PathCaseOptions = {},
): PathCase[] {
  const g = graph as CompiledGraph;
  const listed = graphPaths(g, options);
  const paths = options.cases === 'all' ? listed.paths : [...new Set(listed.shortest.values())];
  const way = new Set(listed.paths.flatMap((p) => p.steps.map((s) => s.node)));
  return paths.map((path, i) => ({
    name: path.name,
    path,
    run: () =>
      follow(
        g,
        path,
        script,
        way,
        options.input ?? {},
        options.store ?? new MemoryStore(),
        `path-${i + 1}`,
      ),
  }));
}

async function follow(
  graph: CompiledGraph,
  path: GraphPath,
  script: PathScript,
  way: ReadonlySet<string>,
  input: Readonly<Record<string, unknown>>,
  store: Store,
  runId: string,
): Promise<PathOutcome> {
  const scripted = scriptedCopy(graph, path, script);
  const answers = decisionsOf(path);
  let result = (await run(scripted, input, { store, runId })) as PathOutcome['result'];
  while (result.status === 'waiting') {
    for (const wait of await store.listWaits(runId, { open: true })) {
      // A person's answer is its output: the path's route from it is steered by the answer.
      const key = entryFor(script, wait.node, answers.next(wait.node), 'wait');
      if (!Object.hasOwn(script, key)) {
        return outcome(
          path,
          result,
          way,
          `the run waits at "${wait.node}": give the script "${key}"`,
        );
      }
      await answer(store, runId, wait.requestId, script[key], { by: 'path-case', graph: scripted });
    }
    result = (await resume(store, scripted, runId)) as PathOutcome['result'];
  }
  return outcome(path, await wholeTrace(store, scripted, result), way);
}

// A resumed run's result holds the trace of its last segment; the path is the whole run's.
async function wholeTrace(store: Store, graph: CompiledGraph, result: PathOutcome['result']) {
  const { trace } = await inspect(store, graph, result.runId);
  return { ...result, trace };
}

function outcome(
  path: GraphPath,
  result: PathOutcome['result'],
  way: ReadonlySet<string>,
  stopped?: string,
): PathOutcome {
  const took = result.trace.path.filter((node) => way.has(node));
  const at = took.findIndex((node, i) => node !== path.nodes[i]);
  const left = at === -1 && took.length < path.nodes.length ? took.length : at;
  if (stopped === undefined && left === -1) return { ok: true, took, result };
  const message =
    stopped ??
    (left === 0
      ? `the run started at "${took[0]}", not "${path.nodes[0]}"`
      : `after "${path.nodes[left - 1]}" the run went to ${took[left] === undefined ? `no node (${result.status})` : `"${took[left]}"`}, the path to "${path.nodes[left]}": ${steer(path, left - 1)}`);
  return { ok: false, took, message, result };
}

// Which entry of the script decides the step that went astray.
function steer(path: GraphPath, index: number): string {
  const node = path.nodes[index]!;
  const step = path.steps.filter((s) => !s.node.endsWith('/__end__')).find((s) => s.node === node);
  if (step?.via === 'route')
    return `give the script "route ${declaredName(node)} -> ${declaredName(step.to!)}" an update its router sends there`;
  return `check the script's "node ..." outputs before it`;
}

/** The graph with every body returning the script's output for the path's decision there. */
function scriptedCopy(graph: CompiledGraph, path: GraphPath, script: PathScript): CompiledGraph {
  const decisions = decisionsOf(path);
  const nodes = new Map<string, RuntimeNode>();
  for (const [name, node] of graph.nodes) {
    if (node.inline !== undefined || node.wait !== undefined) {
      nodes.set(name, node);
      continue;
    }
    const fn: NodeFn<unknown, unknown> = () => {
      const step = decisions.next(name);
      if (step?.via === 'error')
        throw permanentError(`scripted failure: the path takes "${name}"'s onError edge`);
      return script[entryFor(script, name, step, 'node')] ?? {};
    };
    nodes.set(name, { ...node, fn });
  }
  return { ...graph, nodes };
}

/** The path's decisions at each node, handed out visit by visit (a loop's node has several). */
function decisionsOf(path: GraphPath): { next(node: string): PathStep | undefined } {
  const steps = new Map<string, PathStep[]>();
  for (const step of path.steps) steps.set(step.node, [...(steps.get(step.node) ?? []), step]);
  const visits = new Map<string, number>();
  return {
    next(node) {
      const list = steps.get(node) ?? [];
      const visit = visits.get(node) ?? 0;
      visits.set(node, visit + 1);
      return list[Math.min(visit, list.length - 1)];
    },
  };
}

// The script entry for a node's output at a step: its route's, when the script has one.
function entryFor(
  script: PathScript,
  node: string,
  step: PathStep | undefined,
  otherwise: 'node' | 'wait',
): string {
  if (step?.via === 'route') {
    const key = `route ${declaredName(node)} -> ${declaredName(step.to!)}`;
    if (Object.hasOwn(script, key)) return key;
  }
  return `${otherwise} ${declaredName(node)}`;
}
