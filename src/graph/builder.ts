import { z } from 'zod';
import type { ErrorValue } from '../error/error-value.js';
import { WaymarkError } from '../error/waymark-error.js';
import type { Field, GraphOptions, MapOptions, NodeOptions } from './builder-options.js';
import type { CompiledGraph } from './compiled.js';
import { type ConcurrencyLimit, limitsDef } from './concurrency.js';
import { type Diagnostic, formatDiagnostics } from './diagnostic.js';
import type { End } from './end.js';
import { flatten } from './flatten.js';
import { structuralHash } from './hash.js';
import type { JoinPolicyInput } from './join.js';
import { kindOf, rateOf, spendOf } from './kinds.js';
import { withDefaults } from './node-defaults.js';
import { waitSpecOf } from './person.js';
import type { Reducer } from './reducers.js';
import { retentionPolicy } from './retention.js';
import { runtimeNodes } from './runtime-nodes.js';
import { type NotBefore, sleepSpecOf } from './sleep.js';
import {
  inputFields,
  mappedInline,
  outputFields,
  type SubgraphEntry,
  type SubgraphOptions,
  sameNames,
  slotOf,
} from './subgraph.js';
import type {
  EdgeDef,
  FanOutDef,
  GraphDef,
  JoinDef,
  JoinPolicy,
  NodeDef,
  NodeFn,
  RetryOptions,
  RetryPolicy,
  RouteDef,
  RouterFn,
  Tolerance,
} from './types.js';
import { untrackedOf, withUntrackedDefaults } from './untracked.js';
import { analyze, validate } from './validate.js';
import type { WorkspaceDef } from './workspace.js';

/**
 * Declares a graph. Chain `.node()`, `.edge()`, `.route()`, `.entry()`, then `.compile()`.
 * Type parameters: the state `S`, the node names declared so far `N`, and the run input `I`.
 *
 * @example
 * const State = z.object({ claim: z.string(), verified: z.boolean().default(false) });
 * const g = graph('check', { state: State })
 *   .node('verify', async (s) => ({ verified: s.claim.length > 0 }))
 *   .edge('verify', END)
 *   .entry('verify')
 *   .compile();
 */
export class GraphBuilder<
  S = Record<string, unknown>,
  N extends string = never,
  I = S,
  O = S,
  C = unknown,
> {
  readonly #name: string;
  readonly #options: GraphOptions<z.ZodObject>;
  readonly #nodes: NodeDef[] = [];
  readonly #fns = new Map<string, NodeFn<S, unknown>>();
  readonly #edges: EdgeDef[] = [];
  readonly #routes: RouteDef[] = [];
  readonly #routers = new Map<string, RouterFn<S>>();
  readonly #fanOuts: FanOutDef[] = [];
  readonly #scores = new Map<string, (state: Readonly<S>) => number>();
  readonly #retryWhens = new Map<string, (error: ErrorValue) => boolean>();
  readonly #cacheKeys = new Map<string, (state: unknown) => string>();
  readonly #notBefores = new Map<string, NotBefore>();
  readonly #subgraphs: SubgraphEntry[] = [];
  #entry: string | null = null;

  constructor(name: string, options: GraphOptions<z.ZodObject>) {
    if (!(options?.state instanceof z.ZodObject)) {
      throw new WaymarkError(
        'DECLARATION_INVALID',
        `graph "${name}": options.state must be a zod object schema`,
        {
          retryable: false,
        },
      );
    }
    for (const key of ['input', 'output'] as const) {
      const schema = options[key];
      if (schema !== undefined && !(schema instanceof z.ZodObject)) {
        throw new WaymarkError(
          'DECLARATION_INVALID',
          `graph "${name}": options.${key} must be a zod object schema`,
          { retryable: false },
        );
      }
    }
    this.#name = name;
    this.#options = options;
  }

  /** Adds a node. Its function gets the frozen state and returns an update. */
  node<const K extends string, const W extends Field<S> = Field<S>>(
    name: K,
    fn: NodeFn<S, Partial<Pick<S, NoInfer<W>>>, C>,
    options: NodeOptions<S, W> = {},
  ): GraphBuilder<S, N | K, I, O, C> {
    // Key order is fixed here so the structural hash does not depend on how options were written;
    // plain assignments, not conditional spreads, since a 10,000-node declaration calls this a lot.
    const wait = waitSpecOf(fn);
    const def: { -readonly [K in keyof NodeDef]: NodeDef[K] } = {
      name,
      kind: wait ? (wait.event ? 'event' : 'person') : (options.kind ?? kindOf(fn) ?? 'code'),
      version: options.version ?? 1,
    };
    const defaults = this.#options.nodeDefaults;
    const opts = defaults === undefined ? options : withDefaults(options, defaults, def.kind);
    if (opts.visits !== undefined) def.visits = opts.visits;
    if (opts.retry !== undefined) {
      def.retry = copyRetry(opts.retry);
      const when = (opts.retry as RetryOptions | null)?.when;
      if (typeof when === 'function' && !this.#retryWhens.has(name))
        this.#retryWhens.set(name, when);
    }
    if (opts.timeoutMs !== undefined) def.timeoutMs = opts.timeoutMs;
    if (opts.idleTimeoutMs !== undefined) def.idleTimeoutMs = opts.idleTimeoutMs;
    if (opts.onError !== undefined) def.onError = opts.onError;
    if (opts.reads !== undefined) def.reads = copyList(opts.reads);
    if (opts.readsContext === true) def.readsContext = true;
    if (opts.cache !== undefined) {
      const { ttlMs, key } = opts.cache as { ttlMs: number; key?: unknown };
      def.cache = {
        ttlMs,
        ...(key !== undefined && { key: (typeof key === 'function' ? true : key) as true }),
      };
      if (typeof key === 'function' && !this.#cacheKeys.has(name))
        this.#cacheKeys.set(name, key as (state: unknown) => string);
    }
    if (typeof opts.notBefore === 'function') {
      def.notBefore = true;
      if (!this.#notBefores.has(name)) this.#notBefores.set(name, opts.notBefore as NotBefore);
    } else if (opts.notBefore !== undefined) def.notBefore = opts.notBefore as never;
    if (opts.writes !== undefined) def.writes = copyList(opts.writes);
    // A sleep brings no update: it writes nothing, and the validator may count on that.
    else if (sleepSpecOf(fn) !== undefined) def.writes = [];
    if (opts.workspace !== undefined) {
      def.workspace = copyWorkspace(opts.workspace);
      // The patch field is where the working copy starts from and what the update sets: the
      // node reads and writes it, so its input hash and its write check cover it.
      const field = def.workspace.patch;
      if (Array.isArray(def.reads) && !def.reads.includes(field)) def.reads = [...def.reads, field];
      if (Array.isArray(def.writes) && !def.writes.includes(field))
        def.writes = [...def.writes, field];
    }
    if (opts.exec !== undefined) def.exec = copyList(opts.exec);
    if (opts.terminal !== undefined) def.terminal = opts.terminal;
    if (opts.parentGoto !== undefined) def.parentGoto = copyList(opts.parentGoto);
    const spend = opts.spend ?? spendOf(fn);
    if (spend !== undefined) def.spend = { ...spend };
    const rate = opts.rateLimit ?? rateOf(fn);
    if (rate !== undefined)
      def.rateLimit = typeof rate === 'object' && rate !== null ? { ...rate } : rate;
    if (wait?.answers !== undefined) def.answers = wait.answers;
    // `tolerate` alone makes an all() join: it only means something on a join.
    if (opts.join !== undefined || opts.tolerate !== undefined) {
      def.join = joinDef(opts.join ?? { kind: 'all' }, opts.tolerate);
    }
    if (opts.join?.kind === 'best' && !this.#scores.has(name))
      this.#scores.set(name, opts.join.score);
    this.#nodes.push(def);
    if (!this.#fns.has(name)) this.#fns.set(name, fn as NodeFn<S, unknown>);
    return this as unknown as GraphBuilder<S, N | K, I, O, C>;
  }

  /**
   * Adds a compiled graph as one node: `input` maps this graph's state to the child's input,
   * `output` maps the child's output to an update of this graph, `reads`/`writes` limit both as
   * they limit a node. The child's nodes run inside this run under the path `name/…`, each
   * checkpointed, retried, capped and answerable like this graph's own (docs/subgraphs.md).
   *
   * @example
   * .subgraph('review', reviewGraph, { input: { draft: 'text' }, output: { verdict: 'decision' }, reads: ['text'], writes: ['verdict'] })
   */
  subgraph<const K extends string, CS, CI, CO, const W extends Field<S> = Field<S>>(
    name: K,
    child: CompiledGraph<CS, CI, CO>,
    options: SubgraphOptions<S, CI, CO, W> = {},
  ): GraphBuilder<S, N | K, I, O, C> {
    const compiled = child as unknown as CompiledGraph;
    if (typeof compiled?.def !== 'object' || !(compiled.nodes instanceof Map)) {
      throw new WaymarkError(
        'DECLARATION_INVALID',
        `graph "${this.#name}": subgraph "${name}" must be a compiled graph (call .compile() on it)`,
        { retryable: false },
      );
    }
    const input = options.input as SubgraphOptions<unknown, unknown, unknown>['input'];
    const output = options.output as SubgraphOptions<unknown, unknown, unknown>['output'];
    const entry: SubgraphEntry = {
      def: {
        name,
        slot: slotOf(name),
        graph: compiled.def,
        input:
          typeof input === 'function'
            ? 'function'
            : ({ ...(input ?? sameNames(inputFields(compiled))) } as Record<string, string>),
        output:
          typeof output === 'function'
            ? 'function'
            : ({ ...(output ?? sameNames(outputFields(compiled))) } as Record<string, string>),
      },
      child: compiled,
      input: typeof input === 'function' ? (input as SubgraphEntry['input']) : undefined,
      output: typeof output === 'function' ? (output as (s: unknown) => unknown) : undefined,
    };
    this.#subgraphs.push(entry);
    const { input: _i, output: _o, ...nodeOptions } = options;
    this.node(name, mappedInline as NodeFn<S, Partial<Pick<S, W>>>, {
      ...(nodeOptions as NodeOptions<S, W>),
      kind: 'subgraph',
    });
    return this as unknown as GraphBuilder<S, N | K, I, O, C>;
  }

  /** Adds a static edge: when `from` completes, `to` runs. */
  edge(from: N, to: N | End): this {
    this.#edges.push({ from, to });
    return this;
  }

  /** Attaches a router to `from`. It runs after the node and must return one of `targets`. */
  route<const T extends N | End>(
    from: N,
    router: RouterFn<S, NoInfer<T>>,
    targets: readonly T[],
  ): this {
    this.#routes.push({ from, targets: Array.isArray(targets) ? [...targets] : [] });
    if (!this.#routers.has(from)) this.#routers.set(from, router);
    return this;
  }

  /**
   * When `from` completes, runs one branch per entry node in `branches`, side by side; each
   * branch is a path that ends at the `join` node, which decides how their updates combine.
   *
   * @example
   * .fanOut('triage', ['fix-code', 'update-tests'], 'merge')
   */
  fanOut(
    from: N,
    branches: readonly N[],
    join: N,
    options: { readonly concurrency?: number } = {},
  ): this {
    this.#fanOuts.push({
      kind: 'fixed',
      from,
      branches: copyList(branches),
      join,
      ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
    });
    return this;
  }

  /**
   * When `from` completes, runs one branch per item of the list in state field `over`, starting
   * at `branch` and ending at `join`; branches are merged in item order.
   *
   * @example
   * .map('list-files', { over: 'files', branch: 'audit', join: 'collect', concurrency: 4 })
   */
  map(from: N, options: MapOptions<S, N>): this {
    this.#fanOuts.push({
      kind: 'map',
      from,
      over: options.over,
      branch: options.branch,
      join: options.join,
      ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
      ...(options.maxItems !== undefined && { maxItems: options.maxItems }),
    });
    return this;
  }

  /** Names the node a run starts at. */
  entry(name: N): this {
    this.#entry = name;
    return this;
  }

  /** The declaration as plain data, valid or not. */
  toDef(): GraphDef {
    const reducers: Record<string, string> = {};
    for (const [field, reducer] of Object.entries(this.#options.reducers ?? {})) {
      if (reducer) reducers[field] = (reducer as Reducer).name;
    }
    return {
      name: this.#name,
      version: this.#options.version ?? 1,
      fields: Object.keys(this.#options.state.shape),
      reducers,
      entry: this.#entry,
      // Copies: a builder used again after compile() must not change a compiled graph's data.
      nodes: [...this.#nodes],
      edges: [...this.#edges],
      routes: [...this.#routes],
      fanOuts: [...this.#fanOuts],
      // Only when declared: the data (and the hash) of a graph without them stays as it was.
      ...(this.#options.input && { inputs: Object.keys(this.#options.input.shape) }),
      ...(this.#options.output && { outputs: Object.keys(this.#options.output.shape) }),
      ...(this.#subgraphs.length > 0 && { subgraphs: this.#subgraphs.map((e) => e.def) }),
      ...(this.#options.untracked !== undefined && {
        untracked: copyList(this.#options.untracked as readonly string[]),
      }),
      ...(this.#options.limits !== undefined && { limits: limitsDef(this.#options.limits) }),
    };
  }

  /**
   * Every problem in the declaration: errors, and warnings that do not stop `compile()`. Empty
   * when the graph compiles without a warning.
   */
  validate(): Diagnostic[] {
    return withUntrackedDefaults(validate(this.toDef()), this.#options);
  }

  /**
   * Validates the graph and returns it ready to run.
   * Warnings do not stop it; `validate()` lists them.
   * @throws WaymarkError `GRAPH_INVALID` whose `details` lists every error diagnostic.
   */
  compile(): CompiledGraph<S, I, O> {
    const def = this.toDef();
    const analysis = analyze(def, true);
    const { repeatable } = analysis;
    const diagnostics = withUntrackedDefaults(analysis.diagnostics, this.#options);
    const errors = diagnostics.filter((d) => d.severity === 'error');
    if (errors.length > 0) {
      throw new WaymarkError(
        'GRAPH_INVALID',
        `graph "${def.name}" has ${errors.length} problem(s):\n${formatDiagnostics(errors)}`,
        { details: errors, retryable: false },
      );
    }
    const nodes = runtimeNodes(def, repeatable, {
      fns: this.#fns as ReadonlyMap<string, NodeFn<unknown, unknown>>,
      routers: this.#routers as ReadonlyMap<string, RouterFn<unknown>>,
      scores: this.#scores as ReadonlyMap<string, (s: unknown) => number>,
      retryWhens: this.#retryWhens,
      cacheKeys: this.#cacheKeys,
      notBefores: this.#notBefores,
    });
    const shape = this.#options.state.shape as Record<string, z.ZodType>;
    const reducers = new Map<string, Reducer>();
    for (const [field, reducer] of Object.entries(this.#options.reducers ?? {})) {
      if (reducer) reducers.set(field, reducer as Reducer);
    }
    const fieldSchemas = new Map(Object.entries(shape));
    if (this.#subgraphs.length > 0) flatten(nodes, this.#subgraphs, fieldSchemas, reducers);
    const untracked = untrackedOf(def.untracked, shape);
    let hash: string | undefined;
    return Object.freeze({
      // Computed on first use: a run without a store never needs it, and it is a tenth of compile.
      get hash() {
        hash ??= structuralHash(def);
        return hash;
      },
      name: def.name,
      version: def.version,
      stateVersion: this.#options.stateVersion ?? 1,
      migrations: new Map(
        Object.entries(this.#options.migrations ?? {}).map(([from, fn]) => [Number(from), fn]),
      ),
      def,
      schema: this.#options.state,
      ...(this.#options.input && { input: this.#options.input }),
      ...(this.#options.unknownInput === 'strip' && { stripsUnknownInput: true as const }),
      ...(this.#options.output && { output: this.#options.output }),
      ...(this.#options.context && { context: this.#options.context }),
      entry: def.entry!,
      nodes,
      fieldSchemas,
      reducers,
      ...(untracked !== undefined && { untracked }),
      ...(this.#options.retention !== undefined && {
        retention: retentionPolicy(def.name, this.#options.retention),
      }),
      ...(this.#options.limits !== undefined && {
        limits: this.#options.limits as ConcurrencyLimit,
      }),
    });
  }
}

// Copies with a fixed key order: the compiled graph must not change when the caller later edits
// the object it passed, and the structural hash must not depend on how the object was written.
function copyRetry(retry: RetryOptions): RetryPolicy {
  if (typeof retry !== 'object' || retry === null) return retry as never; // the validator reports it
  const { when } = retry;
  return {
    attempts: retry.attempts,
    ...(retry.backoffMs !== undefined && { backoffMs: retry.backoffMs }),
    ...(retry.factor !== undefined && { factor: retry.factor }),
    ...(retry.maxBackoffMs !== undefined && { maxBackoffMs: retry.maxBackoffMs }),
    ...(retry.retryOn !== undefined && { retryOn: copyList(retry.retryOn) }),
    // The predicate is a function: the def records that there is one (the validator reports
    // anything else as it was given).
    ...(when !== undefined && { when: (typeof when === 'function' ? true : when) as true }),
  };
}

function copyWorkspace(w: WorkspaceDef): WorkspaceDef {
  if (typeof w !== 'object' || w === null) return w; // the validator reports it
  return {
    repo: w.repo,
    ...(w.base !== undefined && { base: w.base }),
    patch: w.patch,
    ...(w.keepFailedMs !== undefined && { keepFailedMs: w.keepFailedMs }),
  };
}

function joinDef<S>(policy: JoinPolicyInput<S>, tolerate: Tolerance | undefined): JoinDef {
  // The score function is not data: it goes to the function table, the def keeps the kind.
  const data: JoinPolicy =
    typeof policy === 'object' && policy !== null && policy.kind === 'best'
      ? { kind: 'best' }
      : policy;
  return tolerate === undefined ? { policy: data } : { policy: data, tolerate };
}

// Not-a-list values pass through untouched so the validator reports them as OPTION_INVALID.
function copyList<T>(list: readonly T[]): readonly T[] {
  return Array.isArray(list) ? [...list] : list;
}

/**
 * Starts declaring a graph over a zod object state schema.
 *
 * @example
 * const g = graph('research', { state: State, version: 1 })
 *   .node('plan', plan, { visits: 3 })
 *   .node('search', search)
 *   .edge('plan', 'search')
 *   .route('search', (s) => (s.done ? END : 'plan'), ['plan', END])
 *   .entry('plan')
 *   .compile();
 */
export function graph<
  Schema extends z.ZodObject,
  In extends z.ZodObject | undefined = undefined,
  Out extends z.ZodObject | undefined = undefined,
  Ctx extends z.ZodType | undefined = undefined,
>(
  name: string,
  options: GraphOptions<Schema> & {
    readonly input?: In;
    readonly output?: Out;
    readonly context?: Ctx;
  },
): GraphBuilder<
  z.output<Schema>,
  never,
  In extends z.ZodObject ? z.input<In> : z.input<Schema>,
  Out extends z.ZodObject ? z.output<Out> : z.output<Schema>,
  Ctx extends z.ZodType ? z.output<Ctx> : undefined
> {
  return new GraphBuilder(name, options as unknown as GraphOptions<z.ZodObject>);
}
