import type { ErrorValue } from '../../error/error-value.js';
import { sentToParent, shownSent } from '../../graph/parent-goto.js';
import { declaredActivation, ownUpdate, withoutSlots } from '../../graph/subgraph.js';
import type { JoinSummary } from '../../graph/types.js';
import { type Untracked, withoutUntracked } from '../../graph/untracked.js';
import { recordedEvent } from '../codec/untracked.js';
import type {
  Activation,
  BranchRef,
  RunEvent,
  RunStatus,
  Snapshot,
  StepResult,
} from '../core/snapshot.js';

/**
 * One event of a run's stream. Every one comes from a commit of the run's history (its `seq`)
 * and has a place in it (`offset`, `seq.i`: the i-th event that commit told), so the stream is
 * the history read again: the same events, in the same order, in process and from the store,
 * whoever drove the run, and a watcher that resumes after an offset gets exactly what follows.
 */
export type StreamEvent = {
  /** `seq.i`: after which a watcher resumes (SSE's event id). */
  readonly offset: string;
  readonly runId: string;
  /** The commit the event belongs to. */
  readonly seq: number;
  /** When that commit was made (ms since the epoch). */
  readonly at: number;
} & StreamEventBody;

/** What a stream event says, by its `type`. */
export type StreamEventBody =
  /** The run started, resumed, or changed status (waiting, succeeded, failed, ...). */
  | {
      readonly type: 'run';
      readonly status: RunStatus;
      /** `moved`: an operator moved it to another node (`resume(..., { goto })`). */
      readonly cause: 'started' | 'resumed' | 'moved' | 'status';
      readonly error?: ErrorValue;
    }
  /**
   * An activation was scheduled: its attempt starts now (in process) or when a worker claims
   * it, after `notBefore` for a retry waiting out its backoff. `sleeping`: it sleeps until
   * `notBefore` (a sleep node, a node's notBefore), the run waiting on a timer.
   */
  | {
      readonly type: 'activation.scheduled';
      readonly activation: string;
      readonly node: string;
      readonly attempt: number;
      readonly parent: string | null;
      readonly branch?: BranchRef;
      readonly notBefore?: number;
      readonly sleeping?: true;
      /** With `sleeping`: the resource whose rate limit deferred the attempt (`rateLimit`). */
      readonly rateLimited?: string;
    }
  | {
      readonly type: 'activation.completed';
      readonly activation: string;
      readonly node: string;
      readonly attempt: number;
      /** The fields it set, as applied. */
      readonly update: unknown;
      /** Its output was read back from an earlier run with the same inputs. */
      readonly reused?: true;
      /** The run's state after it: only when the watcher asked for states. */
      readonly state?: Readonly<Record<string, unknown>>;
    }
  | {
      readonly type: 'activation.failed';
      readonly activation: string;
      readonly node: string;
      readonly attempt: number;
      readonly error: ErrorValue;
      /** It will be tried again (an `activation.scheduled` of the next attempt follows). */
      readonly retrying: boolean;
    }
  /** A breakpoint stopped an activation before it started (`pauseBefore` / `pauseAfter`): a resume runs it. */
  | {
      readonly type: 'activation.paused';
      readonly activation: string;
      readonly node: string;
      readonly parent: string | null;
    }
  /** Activations in flight whose results will be ignored: losing branches, a failed join. */
  | { readonly type: 'activation.cancelled'; readonly activations: readonly string[] }
  | {
      readonly type: 'wait.opened';
      readonly activation: string;
      readonly node: string;
      readonly requestId: string;
      readonly prompt: string;
    }
  | { readonly type: 'wait.answered'; readonly activation: string; readonly answer: unknown }
  /** Waits that will never be applied (their branch or the run was cancelled). */
  | { readonly type: 'wait.closed'; readonly requestIds: readonly string[] }
  /** A fan-out's join decided: its activation is scheduled with what became of each branch. */
  | {
      readonly type: 'join.released';
      readonly activation: string;
      readonly node: string;
      readonly join: JoinSummary;
    }
  /** A run-level cap stopped the run: a visit cap, the step limit, a budget, the deadline. */
  | { readonly type: 'cap.hit'; readonly code: string; readonly message: string }
  /** An operator changed the state of the run while it waited or after it stopped. */
  | {
      readonly type: 'state.patched';
      readonly update: Readonly<Record<string, unknown>>;
      readonly by: string;
      readonly reason: string;
      /** The node the patch stood in for (`patchState(..., { asNode })`). */
      readonly asNode?: string;
    }
  /** What a node told with `ctx.emit`. */
  | {
      readonly type: 'custom';
      readonly activation: string;
      readonly node: string;
      readonly name: string;
      readonly data: unknown;
      /** When the node emitted it. */
      readonly emittedAt: number;
    }
  /**
   * What a node emitted with `ephemeral: true` while it ran (a model's token deltas, its partial
   * object, its tool calls): told only to the watchers of the drive that runs it, as it
   * happens, and never recorded. Its `offset` and `seq` are those of the last recorded event
   * before it, so a watcher that resumes after it resumes after that one.
   */
  | {
      readonly type: 'delta';
      readonly ephemeral: true;
      readonly activation: string;
      readonly node: string;
      readonly attempt: number;
      readonly name: string;
      readonly data: unknown;
    }
  /**
   * An attempt's `ctx.heartbeat()`, told live like a `delta` (at most one a second per attempt)
   * and never recorded: its `at` is when the node sent it; the attempt's last heartbeat is kept
   * in its trace entry.
   */
  | {
      readonly type: 'heartbeat';
      readonly ephemeral: true;
      readonly activation: string;
      readonly node: string;
      readonly attempt: number;
      readonly details?: unknown;
    };

/** Every type a stream event can have, for filters and for the JSON Schema's enum. */
export const streamEventTypes = [
  'run',
  'activation.scheduled',
  'activation.completed',
  'activation.failed',
  'activation.paused',
  'activation.cancelled',
  'wait.opened',
  'wait.answered',
  'wait.closed',
  'join.released',
  'cap.hit',
  'state.patched',
  'custom',
  'delta',
  'heartbeat',
] as const satisfies readonly StreamEventBody['type'][];

/** The error codes of run-level caps: a run stopped by one tells `cap.hit`. */
export const capCodes: ReadonlySet<string> = new Set([
  'VISIT_CAP',
  'STEP_LIMIT',
  'BUDGET_EXCEEDED',
  'RUN_TIMEOUT',
]);

/** What a stream's reader asked for: the state after each completion, or not. */
export interface StreamOptions {
  readonly states?: boolean;
}

/**
 * The events one committed step tells: what its attempt emitted, what became of its
 * activation, what it scheduled, opened, closed or cancelled, and the run's status if it
 * changed, in that order. Pure: the same step always tells the same events. With `untracked`
 * (the graph's), updates and states are told without those fields: the stream is the recorded
 * history, told live or read back from the store alike.
 *
 * @example
 * const told = stepEvents(runId, seq, at, before, event, step(graph, before, event));
 */
export function stepEvents(
  runId: string,
  seq: number,
  at: number,
  before: Snapshot,
  event: RunEvent,
  result: StepResult,
  options: StreamOptions = {},
  untracked?: Untracked,
): StreamEvent[] {
  if (untracked !== undefined) event = recordedEvent(untracked, event);
  const bodies: StreamEventBody[] = [];
  const after = result.snapshot;
  const nodeOf = (id: string) => nodeOfActivation(before, after, id);
  if (event.type === 'started' || event.type === 'resumed' || event.type === 'moved') {
    bodies.push({
      type: 'run',
      status: after.status,
      cause: event.type,
      ...('error' in after && { error: after.error as ErrorValue }),
    });
  }
  if ((event.type === 'completed' || event.type === 'failed') && event.emitted !== undefined) {
    for (const e of event.emitted) {
      bodies.push({
        type: 'custom',
        activation: event.activation,
        node: nodeOf(event.activation),
        name: e.name,
        data: e.data,
        emittedAt: e.at,
      });
    }
  }
  if (event.type === 'patched' && after !== before) {
    bodies.push({
      type: 'state.patched',
      update: event.update,
      by: event.by,
      reason: event.reason,
      ...(event.asNode !== undefined && { asNode: event.asNode }),
    });
  }
  const outcome = result.outcome;
  if (event.type === 'answered')
    bodies.push({ type: 'wait.answered', activation: event.activation, answer: event.answer });
  if (outcome !== undefined) {
    const { activation } = outcome;
    if (outcome.status === 'succeeded') {
      // An answer is its person node's update: the activation completes with it.
      const update =
        event.type === 'completed' ? event.update : event.type === 'answered' ? event.update : null;
      bodies.push({
        type: 'activation.completed',
        activation: activation.id,
        node: activation.node,
        attempt: activation.attempt,
        update: shownUpdate(update ?? null),
        ...(event.type === 'completed' && event.reused === true && { reused: true as const }),
        ...(options.states === true && { state: toldState(after.state, untracked) }),
      });
    } else {
      bodies.push({
        type: 'activation.failed',
        activation: activation.id,
        node: activation.node,
        attempt: activation.attempt,
        error: outcome.error!,
        retrying: outcome.retrying,
      });
    }
  }
  for (const command of result.commands) {
    if (command.type === 'execute') {
      const a = command.activation;
      if (a.join !== undefined)
        bodies.push({ type: 'join.released', activation: a.id, node: a.node, join: a.join });
      bodies.push(scheduled(a, a.notBefore));
    } else if (command.type === 'wait') {
      const a = command.activation;
      bodies.push({
        type: 'wait.opened',
        activation: a.id,
        node: a.node,
        requestId: a.waiting!.requestId,
        prompt: a.waiting!.prompt,
      });
    } else if (command.type === 'abort') {
      bodies.push({ type: 'activation.cancelled', activations: command.activations });
    } else if (command.type === 'closeWaits') {
      bodies.push({ type: 'wait.closed', requestIds: command.requestIds });
    } else if (command.type === 'sleep' && command.activation.sleeping?.until !== undefined) {
      // A sleep is an activation scheduled for later: its wake is its completion.
      bodies.push(scheduled(command.activation, command.activation.sleeping.until, true));
    }
  }
  for (const a of after.pending) {
    if (a.paused !== true || before.pending.some((b) => b.id === a.id && b.paused === true))
      continue;
    bodies.push({
      type: 'activation.paused',
      activation: a.id,
      node: a.node,
      parent: a.parent === null ? null : declaredActivation(a.parent),
    });
  }
  const started = event.type === 'started' || event.type === 'resumed' || event.type === 'moved';
  if (after.status !== before.status && !started) {
    const error = 'error' in after ? (after.error as ErrorValue) : undefined;
    if (error !== undefined && capCodes.has(error.code))
      bodies.push({ type: 'cap.hit', code: error.code, message: error.message });
    bodies.push({
      type: 'run',
      status: after.status,
      cause: 'status',
      ...(error !== undefined && { error }),
    });
  }
  return bodies.map((body, i) => ({ offset: `${seq}.${i}`, runId, seq, at, ...body }));
}

function toldState(state: Snapshot['state'], untracked: Untracked | undefined) {
  const seen = withoutSlots(state);
  return untracked === undefined ? seen : withoutUntracked(untracked, seen);
}

/** The node of an activation pending before or after a step (the id names it otherwise). */
function nodeOfActivation(before: Snapshot, after: Snapshot, id: string): string {
  const found = before.pending.find((a) => a.id === id) ?? after.pending.find((a) => a.id === id);
  if (found !== undefined) return found.node;
  // `node:visit`, or `…/node:visit` inside a branch.
  const last = id.slice(id.lastIndexOf('/') + 1);
  return last.slice(0, last.lastIndexOf(':'));
}

/**
 * Orders offsets: negative when `a` comes before `b`. An offset is `seq.i`; `seq` alone means
 * the whole of that commit.
 *
 * @example
 * compareOffsets('12.3', '12.10'); // < 0
 */
export function compareOffsets(a: string, b: string): number {
  const [as, ai] = parseOffset(a);
  const [bs, bi] = parseOffset(b);
  return as !== bs ? as - bs : ai - bi;
}

/** `[seq, i]` of an offset; `seq` alone is the last event of that commit. */
export function parseOffset(offset: string): [number, number] {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(offset);
  if (match === null) return [Number.NaN, Number.NaN];
  return [Number(match[1]), match[2] === undefined ? Number.POSITIVE_INFINITY : Number(match[2])];
}

/** A completion's update as a watcher is shown it: a child's as it returned it, a parent goto as a marker. */
function shownUpdate(update: unknown): unknown {
  const sent = sentToParent(update);
  return sent === undefined ? ownUpdate(update) : shownSent(sent);
}

/** An activation scheduled, to run now or (a retry's backoff, a sleep) not before `notBefore`. */
function scheduled(a: Activation, notBefore: number | undefined, sleeping?: true) {
  return {
    type: 'activation.scheduled' as const,
    activation: a.id,
    node: a.node,
    attempt: a.attempt,
    parent: a.parent === null ? null : declaredActivation(a.parent),
    ...(a.branch !== undefined && { branch: a.branch }),
    ...(notBefore !== undefined && { notBefore }),
    ...(sleeping && { sleeping }),
    ...(sleeping && a.sleeping?.rate !== undefined && { rateLimited: a.sleeping.rate }),
  };
}
