import type { ErrorClass } from '../error/codes.js';
import type { ErrorValue } from '../error/error-value.js';
import type { ConcurrencyLimitDef } from './concurrency.js';
import type { NodeKind } from './kinds.js';
import type { Memory } from './memory.js';
import type { Patch, WorkspaceDef } from './workspace.js';

/**
 * How a node's failed attempts are tried again. `attempts` counts every attempt, the first one
 * included; the wait before attempt n+1 is `backoffMs * factor^(n-1)`, at most `maxBackoffMs`.
 *
 * @example
 * .node('search', search, { retry: { attempts: 3, backoffMs: 200, factor: 2 } })
 */
export interface RetryPolicy {
  readonly attempts: number;
  readonly backoffMs?: number;
  readonly factor?: number;
  readonly maxBackoffMs?: number;
  /** Error classes worth another attempt; default `['transient', 'timeout']`. */
  readonly retryOn?: readonly ErrorClass[];
  /**
   * Set when the policy has a predicate (`when` in the node's options): a failure of a class in
   * `retryOn` is retried only if the predicate says so. The function itself is not data; it is
   * kept with the node's function.
   */
  readonly when?: true;
}

/**
 * A node's retry policy as declared: the data of {@link RetryPolicy}, and an optional predicate
 * that decides, from the error value, whether a failure is worth another attempt (an HTTP 400
 * is not, a 503 is). It is called like a router: pure, on the recorded error, also on replay.
 *
 * @example
 * .node('fetch', fetch, { retry: { attempts: 4, backoffMs: 500, when: (e) => e.details?.status !== 400 } })
 */
export interface RetryOptions extends Omit<RetryPolicy, 'when'> {
  readonly when?: (error: ErrorValue) => boolean;
}

/** The plain-data description of one node: everything but its function. */
export interface NodeDef {
  readonly name: string;
  readonly kind: NodeKind;
  /** Most activations this node may have in one run; required somewhere on every cycle. */
  readonly visits?: number;
  readonly retry?: RetryPolicy;
  readonly timeoutMs?: number;
  /** The node a failure routes to, with the error recorded, once retries are spent. */
  readonly onError?: string;
  readonly reads?: readonly string[];
  readonly writes?: readonly string[];
  /**
   * Programs the node may start with `ctx.exec`, by name (`'git'`, matching any path ending in
   * `/git`) or by exact path. Absent: the node may start none.
   */
  readonly exec?: readonly string[];
  /** Most time an attempt may go without a heartbeat (see NodeOptions.idleTimeoutMs). */
  readonly idleTimeoutMs?: number;
  /** The run's context is part of the node's input hash (see NodeOptions.readsContext). */
  readonly readsContext?: true;
  /** Outputs reused across runs for `ttlMs`; `key: true` when a key function makes the key. */
  readonly cache?: { readonly ttlMs: number; readonly key?: true };
  /** The node waits for a time its `notBefore` function reads from the state. */
  readonly notBefore?: true;
  /** A terminal node ends its path when it completes (as if it had an edge to END). */
  readonly terminal?: boolean;
  /**
   * The nodes of the parent graph (or END) this node of a subgraph may send the run to with
   * `parent({ goto })`: checked when the parent compiles, as a router's targets are.
   */
  readonly parentGoto?: readonly string[];
  /** Bump when the node's behaviour changes, so recorded outputs are not reused for it. */
  readonly version: number;
  /** Set on the node a fan-out's branches come back to: how their results are combined. */
  readonly join?: JoinDef;
  /**
   * The node works in its own working copy of a repository, and its update carries the patch
   * (see docs/workspaces.md). Its `patch` field is part of what it reads and writes.
   */
  readonly workspace?: WorkspaceDef;
  /**
   * What one attempt of the node may spend, as data the cost bound reads (`model()` and
   * `agent()` declare theirs; a code node that reports usage declares it in its options). Not
   * part of the structural hash: a budget is not the graph's shape.
   */
  readonly spend?: SpendLimits;
  /**
   * Each attempt is admitted through the store against this shared resource's requests and
   * tokens per minute before its body runs (see NodeOptions.rateLimit). Not part of the
   * structural hash: a quota is not the graph's shape.
   */
  readonly rateLimit?: RateLimit;
  /**
   * On a person node without an `update`: the fields of its answer, which is applied as the
   * update, so each must be a state field (`ANSWER_UNMAPPED`). Not part of the graph's hash.
   */
  readonly answers?: readonly string[];
}

/**
 * The most one attempt of a node may spend, as the cost bound reads it (docs/cost.md).
 *
 * @example
 * .node('summarize', summarize, { spend: { calls: 1, maxTokens: 4_000, maxCostUsd: 0.01 } })
 */
/**
 * A shared resource's quota (a provider's API key, say): at most `requestsPerMinute` attempts and
 * `tokensPerMinute` tokens in any 60 seconds, across every run, process and worker of the store.
 *
 * @example
 * const openai: RateLimit = { resource: 'openai', requestsPerMinute: 500, tokensPerMinute: 200_000 };
 */
export interface RateLimit {
  /** Names the quota: nodes naming the same resource share it. */
  readonly resource: string;
  readonly requestsPerMinute?: number;
  /** Counted from the usage attempts record (`ctx.usage`); a node's `maxTokens` is reserved. */
  readonly tokensPerMinute?: number;
}

export interface SpendLimits {
  /** Most model calls in one attempt (a model node's schema retries, an agent's turns). */
  readonly calls?: number;
  /** Most input + output tokens over the attempt's calls. */
  readonly maxTokens?: number;
  /** Most output tokens of one call (the provider's output limit). */
  readonly maxOutputTokens?: number;
  /** Most cost of the attempt, in US dollars. */
  readonly maxCostUsd?: number;
  /** Dollars per million tokens of the models the node may call, by name. */
  readonly prices?: Readonly<
    Record<string, { readonly inputPerMillion: number; readonly outputPerMillion: number }>
  >;
}

/**
 * When a join is done and which branches' updates it keeps:
 * - `all`: waits for every dispatched branch and merges every success
 * - `any`: the first success wins; the other branches are cancelled
 * - `quorum`: the first `k` successes win (merged in branch order); the rest are cancelled
 * - `best`: waits for every branch and keeps the success with the highest declared score
 * - `patches`: waits for every branch like `all`; the branches' patches (the join node's
 *   workspace field) are merged three-way into the join node's workspace, not by a reducer
 */
export type JoinPolicy =
  | { readonly kind: 'all' }
  | { readonly kind: 'any' }
  | { readonly kind: 'quorum'; readonly k: number }
  | { readonly kind: 'best' }
  | { readonly kind: 'patches' };

/**
 * How many failed branches a join tolerates: a count, or a percentage of the dispatched
 * branches such as `'10%'`. One more than that fails the join at once and cancels the rest.
 */
export type Tolerance = number | `${number}%`;

/** A join node's policy, as data (a `best` join's score function lives in the function table). */
export interface JoinDef {
  readonly policy: JoinPolicy;
  /** Absent: `all` and `best` fail fast (0); `any` and `quorum` fail once the quorum is out of reach. */
  readonly tolerate?: Tolerance;
}

/**
 * A node that runs several branches side by side, each a path of nodes ending at `join`:
 * `fixed` starts one branch per entry node listed; `map` starts one branch at `branch` per item
 * of the list in state field `over`, at most `concurrency` at a time.
 */
export type FanOutDef =
  | {
      readonly kind: 'fixed';
      readonly from: string;
      readonly branches: readonly string[];
      readonly join: string;
      readonly concurrency?: number;
    }
  | {
      readonly kind: 'map';
      readonly from: string;
      readonly over: string;
      readonly branch: string;
      readonly join: string;
      readonly concurrency?: number;
      /** Most items the map runs branches for; a longer list fails the fanning-out node. */
      readonly maxItems?: number;
    };

/** A static edge: when `from` completes, `to` runs next. */
export interface EdgeDef {
  readonly from: string;
  readonly to: string;
}

/** A router attached to `from`, with every target it may return declared up front. */
export interface RouteDef {
  readonly from: string;
  readonly targets: readonly string[];
}

/**
 * A graph as plain, JSON-serialisable data. The validator, renderers, CLI and stores read only
 * this; functions live beside it in the compiled graph's tables.
 */
export interface GraphDef {
  readonly name: string;
  readonly version: number;
  /** State fields, in schema order. */
  readonly fields: readonly string[];
  /** Reducer name per field that does not use the default `replace`. */
  readonly reducers: Readonly<Record<string, string>>;
  readonly entry: string | null;
  readonly nodes: readonly NodeDef[];
  readonly edges: readonly EdgeDef[];
  readonly routes: readonly RouteDef[];
  readonly fanOuts: readonly FanOutDef[];
  /** The fields a caller may set (`input` schema); absent: every field. */
  readonly inputs?: readonly string[];
  /** The fields a run hands back as its output (`output` schema); absent: the state. */
  readonly outputs?: readonly string[];
  /** Graphs run as one node of this one, by the name of that node; absent: none. */
  readonly subgraphs?: readonly SubgraphDef[];
  /**
   * State fields kept in memory for one drive of a run and never stored (LangGraph.js:
   * `UntrackedValue`); a load from the store starts them from their defaults. Absent: none.
   */
  readonly untracked?: readonly string[];
  /** The graph's concurrency limit per key (`limits`); absent: none. */
  readonly limits?: ConcurrencyLimitDef;
}

/**
 * A compiled graph run as node `name` of another (`.subgraph()`), as data. Its state lives in
 * the private field `slot` of the enclosing state while it runs; a mapping is a record of field
 * names (checked against both schemas) or `'function'`, which the validator cannot look into.
 */
export interface SubgraphDef {
  readonly name: string;
  readonly slot: string;
  readonly graph: GraphDef;
  /** Child input field -> parent field it is read from. */
  readonly input: Readonly<Record<string, string>> | 'function';
  /** Parent field -> child output field it is set from. */
  readonly output: Readonly<Record<string, string>> | 'function';
}

/** Options of `ctx.emit`. */
export interface EmitOptions {
  /**
   * Told at once to the watchers of this drive of the run (its `watch` option, and the clients of
   * `waymark serve` that drives it), while the node runs, and never recorded: a watcher that
   * comes later, or reads the store, never sees it. For progress that only matters live, such
   * as a model's token deltas (`model({ stream: true })`).
   */
  readonly ephemeral?: boolean;
}

/**
 * What a node function receives besides the state.
 *
 * @example
 * .node('fetch', async (s, ctx) => ({ body: await (await fetch(s.url, { signal: ctx.signal })).text() }))
 */
export interface NodeContext<C = unknown> {
  readonly runId: string;
  /**
   * The run's context (LangGraph.js: `context`, `configurable`): a value given when the run
   * started (`run(g, input, { context })`, `--context`, `context` in `POST /runs`), checked by the
   * graph's `context` schema, the same for every node, attempt and resume. Not state: not in a
   * checkpoint's state, not in its hash. Undefined when the graph declares none.
   */
  readonly context: C;
  /** Stable id of this activation (`node:visit`), the same on every attempt and after resume. */
  readonly activationId: string;
  readonly node: string;
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** Aborted when the node times out or the run is cancelled; pass it to anything that waits. */
  readonly signal: AbortSignal;
  /** Every error value recorded in the run so far, oldest first. */
  readonly errors: readonly ErrorValue[];
  /** The error that routed the run here through an `onError` target, if that is how it came. */
  readonly error: ErrorValue | undefined;
  /** In a map branch: the item this branch is for, and its index in the list. */
  readonly item: unknown;
  readonly index: number | undefined;
  /** In a join node: which branches succeeded, failed or were cancelled. */
  readonly join: JoinSummary | undefined;
  /**
   * Performs an action outside the run at most once: the key is derived from the run, this
   * activation and `name`; a recorded result is returned without calling `fn`; otherwise
   * `fn(key)` runs and its (JSON) result is recorded at once. Pass the key to the receiver so it
   * can dedupe the one call a crash can repeat. Each name once per attempt.
   *
   * @example
   * const post = await ctx.effect('publish', (key) => cms.create(draft, { idempotencyKey: key }));
   */
  effect<T>(name: string, fn: (key: string) => T | Promise<T>): Promise<T>;
  /**
   * Runs a program without a shell: `argv[0]` must be on the node's `exec` allowlist (else
   * `EXEC_DENIED`, before anything starts) and every other element reaches the program as one
   * argument, exactly as written. Resolves with the exit code and the captured output, also for
   * a non-zero exit; the process is killed at `timeoutMs` (`EXEC_TIMEOUT`) or when `ctx.signal`
   * aborts (`EXEC_ABORTED`). Not recorded: wrap it in `ctx.effect` if it must not run twice.
   *
   * @example
   * .node('test', async (_s, ctx) => {
   *   const { exitCode, stdout } = await ctx.exec(['npm', 'test'], { timeoutMs: 60_000 });
   *   return { passed: exitCode === 0, log: stdout };
   * }, { exec: ['npm'] })
   */
  exec(argv: readonly string[], options?: ExecOptions): Promise<ExecResult>;
  /**
   * Reports model usage of this attempt (added up if called more than once): it goes into the
   * attempt's trace entry and the run's spend, which run budgets are checked against. Model
   * nodes call it; a node calling an API that bills by token may too.
   */
  usage(usage: Usage): void;
  /**
   * Sets an output aside in the run's quarantine, with machine-readable reasons, instead of
   * letting it into state: what a check rejected stays inspectable (`waymark show`) without
   * anything downstream building on it. Recorded when the attempt completes.
   */
  quarantine(output: unknown, reasons: readonly string[]): void;
  /**
   * Tells the run's watchers something (progress, a partial result): a `custom` event of the
   * run's stream, named `name`, with `data` copied through JSON. Recorded with the attempt, so
   * a watcher in another process, or one that comes later, sees it too, once: it reaches them
   * when the attempt ends (see docs/streaming.md).
   */
  emit(name: string, data?: unknown, options?: EmitOptions): void;
  /**
   * Says the attempt is alive (a chunk of a model stream arrived, a long tool call is still
   * going): a node with `idleTimeoutMs` is timed out only after that long without one. `details`
   * (copied through JSON) is kept as the attempt's last heartbeat, in its trace entry. Cheap: it
   * writes nothing until the attempt ends.
   *
   * @example
   * for await (const chunk of stream) { ctx.heartbeat({ tokens: ++n }); text += chunk; }
   */
  heartbeat(details?: unknown): void;
  /** Records one turn of a loop inside this attempt (an agent's model call and tool calls). */
  turn(turn: TurnRecord): void;
  /** What the run had spent when this attempt started, and its budget. */
  readonly spend: Spend;
  readonly budget: Budget;
  /**
   * The model the run was started with (`run(g, input, { model })`, the CLI's `--model`), as
   * `provider:model-id`; model nodes use it instead of their own. Undefined when none was given.
   */
  readonly model: string | undefined;
  /** The node's working copy, when it declares `workspace`; undefined otherwise. */
  readonly workspace?: Workspace | undefined;
  /**
   * The memory kept across runs, in the run's store (a run without a store: for the run only).
   * Reads go to the store; a put or a delete is recorded in the effect ledger, keyed by this
   * activation, the address and how many times this attempt wrote it before, so a body run
   * again after a crash, a retry or a resume does not write twice.
   *
   * @example
   * await ctx.memory.put(['users', s.userId], 'last-topic', { topic: s.topic });
   */
  readonly memory: Memory;
}

/**
 * A node's working copy, as `ctx.workspace`: its path, where it started, and helpers that stay
 * inside it. Every path a helper takes is relative to the working copy; one that leads outside
 * is refused with `EXEC_OUTSIDE_WORKSPACE`.
 *
 * @example
 * const source = await ctx.workspace!.read('src/billing.js');
 * await ctx.workspace!.write('src/billing.js', source.replace('<=', '<'));
 */
export interface Workspace {
  /** The working copy's absolute path: `ctx.exec` runs there. */
  readonly path: string;
  /** The commit the run's work started from (the recorded base). */
  readonly base: string;
  /** The commit this activation started from: the base, or the patch it builds on. */
  readonly start: string;
  /** The absolute path of `file` inside the working copy. */
  resolve(file: string): string;
  read(file: string): Promise<string>;
  write(file: string, content: string | Uint8Array): Promise<void>;
  remove(file: string): Promise<void>;
  /** Runs a program in the working copy, as `ctx.exec` does (the node's `exec` allowlist). */
  exec(argv: readonly string[], options?: ExecOptions): Promise<ExecResult>;
}

/**
 * Tokens (and optionally cost) one model call or one attempt used.
 *
 * @example
 * ctx.usage({ inputTokens: 812, outputTokens: 164, model: 'openai:gpt-4o-mini', costUsd: 0.0002 });
 */
export interface Usage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** `provider:model-id`. */
  readonly model?: string;
  readonly costUsd?: number;
}

/** One turn of a loop inside an attempt, as the trace shows it under the attempt. */
export interface TurnRecord {
  /** 1 for the first turn. */
  readonly turn: number;
  readonly durationMs: number;
  readonly usage?: Usage;
  /** Names of the tools called in this turn, in order. */
  readonly toolCalls?: readonly string[];
  /** What each tool call of this turn was given and gave back, when the node records it. */
  readonly tools?: readonly ToolCallRecord[];
}

/**
 * One tool call as the trace keeps it: which tool, with what, what came back (or the code it
 * was refused or failed with), and how long it took.
 *
 * @example
 * { tool: 'repo.read_file', input: { path: 'a.js' }, output: { text: '...' }, durationMs: 4 }
 */
export interface ToolCallRecord {
  readonly tool: string;
  readonly input: unknown;
  readonly output?: unknown;
  readonly error?: { readonly code: string; readonly message: string };
  readonly durationMs: number;
  /** Set on a side-effecting tool: the idempotency key its call ran under. */
  readonly effect?: string;
}

/** Model tokens and cost a run has spent, over every attempt that reported usage. */
export interface Spend {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly costUsd: number;
}

/** A run's budget: what model nodes may spend in total. Absent fields have no limit. */
export interface Budget {
  readonly maxTokens?: number;
  readonly maxCostUsd?: number;
}

/**
 * Options of `ctx.exec`.
 *
 * @example
 * await ctx.exec(['node', 'repro.js'], { cwd: dir, timeoutMs: 10_000, env: { CI: '1' } });
 */
export interface ExecOptions {
  /** Working directory of the process; default the engine's own. */
  readonly cwd?: string;
  /**
   * Variables added to the minimal environment the process gets by default (PATH, HOME, USER,
   * LOGNAME, locale, TZ, temp dirs); `undefined` removes one. `{ ...process.env }` passes all.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Kills the process after this long; the call rejects with `EXEC_TIMEOUT`. */
  readonly timeoutMs?: number;
  /** Written to stdin, which is then closed; without it stdin reads as empty. */
  readonly input?: string | Uint8Array;
  /** Bytes kept of stdout and of stderr each; the rest is dropped. Default 1 MiB (1,048,576). */
  readonly maxOutputBytes?: number;
}

/**
 * How a process started by `ctx.exec` ended. A non-zero `exitCode` is a result, not an error.
 *
 * @example
 * const r = await ctx.exec(['git', 'diff', '--quiet']); // r.exitCode === 1 when there are changes
 */
export interface ExecResult {
  /** The exit code, or null when a signal ended the process. */
  readonly exitCode: number | null;
  /** The signal that ended the process (`'SIGSEGV'`), or null when it exited. */
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
  /** True when stdout or stderr was longer than `maxOutputBytes` and was cut there. */
  readonly truncated: boolean;
}

/** What a join node learns about the branches it joined; indexes are branch/item order. */
export interface JoinSummary {
  /** The branches whose updates were merged, in merge order. */
  readonly merged: readonly number[];
  readonly succeeded: readonly number[];
  readonly failed: readonly { readonly index: number; readonly error: ErrorValue }[];
  readonly cancelled: readonly number[];
  /** In a `patches` join: the patch of each merged branch, in merge order (null: none). */
  readonly patches?: readonly (Patch | null)[];
}

/** A node body: reads the frozen state, returns an update (or nothing); never mutates. */
export type NodeFn<S, U = Partial<S>, C = unknown> = (
  state: Readonly<S>,
  ctx: NodeContext<C>,
) => NodeResult<U> | Promise<NodeResult<U>>;

// biome-ignore lint/suspicious/noConfusingVoidType: `void` lets a node with no return statement type-check.
type NodeResult<U> = U | undefined | void;

/** A pure function of the state that picks the next node among declared targets. */
export type RouterFn<S, T extends string = string> = (state: Readonly<S>) => T;
