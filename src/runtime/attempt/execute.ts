import type { EffectLedger } from '../../effects/ledger.js';
import { type ErrorValue, errorValue, provenance } from '../../error/error-value.js';
import { thrownData } from '../../error/thrown-data.js';
import { isWaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph, RuntimeNode } from '../../graph/compiled.js';
import type { Spend, TurnRecord } from '../../graph/types.js';
import type { WorkspaceSession } from '../../workspace/session.js';
import type { Clock } from '../clock.js';
import { refusalError } from '../core/apply-update.js';
import { messageOf } from '../core/call-user.js';
import { parseReturn } from '../core/parent-update.js';
import { readView } from '../core/read-view.js';
import type { Activation, RunEvent, RunLimits } from '../core/snapshot.js';
import { AttemptContext } from './context.js';
import { openAttemptWorkspace, withPatch } from './workspace.js';

// The reason the timeout's timer is stopped with: one object, not a DOMException (and its stack)
// made on every attempt of a node with a timeout.
const finished = new Error('the attempt finished');

/** What one attempt needs besides the node: the run's identity, state, signal and clock. */
export interface AttemptInput {
  readonly runId: string;
  readonly state: Readonly<Record<string, unknown>>;
  readonly item: unknown;
  readonly index: number | undefined;
  readonly errors: readonly ErrorValue[];
  readonly ledger: EffectLedger;
  /** Carried into the completion event, so the history records what the activation read. */
  readonly inputHash: string | undefined;
  /**
   * Aborted when the run stops or the activation is cancelled. A function makes the signal lazy:
   * it is created only if the node reads `ctx.signal` (an AbortController per branch was the
   * largest cost of a fan-out when eager).
   */
  readonly signal: AbortSignal | (() => AbortSignal);
  readonly spent: Spend;
  readonly limits: RunLimits;
  readonly clock: Clock;
  /** Where the attempt's ephemeral emits go; absent when nobody watches the drive. */
  readonly live?: (name: string, data: unknown, at: number) => void;
  /** Where the attempt's heartbeats are told as they happen; absent when nobody watches. */
  readonly liveBeat?: (at: number, details: unknown) => void;
  /** Shared with the attempt's idle timer (set here, by `executeAttempt`). */
  readonly beat?: Beat;
  /** Admits the attempt's calls after the first, for a rate-limited node (rate-admission.ts). */
  readonly admitCall?: ((call: number, signal: AbortSignal) => Promise<void>) | undefined;
}

/** An attempt's last heartbeat, shared by its context (which beats) and its idle timer. */
export interface Beat {
  at: number;
  details?: unknown;
  beaten: boolean;
}

/**
 * One attempt as it happened: the event it ends in (a completion with the update as parsed, or
 * a failure), when it ran, and what it reported for its trace entry. This is all that crosses
 * from whoever executes a node body to whoever drives the run: no side channel.
 */
export interface Attempt {
  readonly event: Extract<RunEvent, { type: 'completed' | 'failed' }>;
  readonly startedAt: number;
  readonly endedAt: number;
  readonly turns?: readonly TurnRecord[];
  readonly reused?: true;
  /** The attempt's last `ctx.heartbeat()`: when, and its details. */
  readonly heartbeat?: { readonly at: number; readonly details?: unknown };
}

/**
 * Runs one attempt of one activation and reports it; never rejects. The node's return is parsed
 * into the fields it sets right here (an update the schema refuses is the attempt's failure),
 * so its completion event records exactly what will be applied. With a `timeoutMs`, the
 * attempt's signal aborts at the limit and the attempt is reported as timed out even if the node
 * ignores the signal, or never yields (a synchronous body that blocks past the limit is judged
 * by its elapsed time); whatever it returns late is discarded.
 */
export function executeAttempt(
  graph: CompiledGraph,
  node: RuntimeNode,
  activation: Activation,
  input: AttemptInput,
  startedAt: number = input.clock.now(),
): Promise<Attempt> {
  const { timeoutMs, idleTimeoutMs } = node.def;
  if (timeoutMs === undefined && idleTimeoutMs === undefined)
    return invoke(graph, node, activation, input, input.signal, startedAt);
  const beat: Beat = { at: startedAt, beaten: false };
  const parent = typeof input.signal === 'function' ? input.signal() : input.signal;

  // A controller per attempt only when a timeout needs one: it is the costliest object per step.
  const controller = new AbortController();
  const forward = () => controller.abort(parent.reason);
  if (parent.aborted) forward();
  else parent.addEventListener('abort', forward, { once: true });
  const timer = new AbortController();
  const { clock } = input;
  const hardAt = timeoutMs === undefined ? Number.POSITIVE_INFINITY : startedAt + timeoutMs;
  // One timer for both limits, re-armed when it finds a heartbeat since: a heartbeat itself only
  // writes down the time, so it costs no timer.
  const expired = (async (): Promise<Attempt | undefined> => {
    for (;;) {
      const idleAt =
        idleTimeoutMs === undefined ? Number.POSITIVE_INFINITY : beat.at + idleTimeoutMs;
      await clock.sleep(Math.max(0, Math.min(hardAt, idleAt) - clock.now()), timer.signal);
      if (timer.signal.aborted) return undefined;
      const now = clock.now();
      const error =
        now >= hardAt
          ? timedOut(node, activation, timeoutMs!)
          : idleTimeoutMs !== undefined && now >= beat.at + idleTimeoutMs
            ? idleTimedOut(node, activation, idleTimeoutMs)
            : undefined;
      if (error === undefined) continue;
      controller.abort(new Error(error.message));
      return withBeat(failedAttempt(activation, error, startedAt, now), beat);
    }
  })();
  const ran = invoke(
    graph,
    node,
    activation,
    { ...input, beat },
    controller.signal,
    startedAt,
  ).then((attempt) => {
    // A body that never yielded could not be interrupted: its elapsed time decides.
    if (timeoutMs === undefined || attempt.endedAt - attempt.startedAt <= timeoutMs) return attempt;
    return failedAttempt(
      activation,
      timedOut(node, activation, timeoutMs),
      startedAt,
      attempt.endedAt,
    );
  });
  return Promise.race([ran, expired.then((a) => a ?? ran)]).finally(() => {
    timer.abort(finished);
    parent.removeEventListener('abort', forward);
  });
}

async function invoke(
  graph: CompiledGraph,
  node: RuntimeNode,
  activation: Activation,
  input: AttemptInput,
  signal: AbortSignal | (() => AbortSignal),
  startedAt: number,
): Promise<Attempt> {
  const ctx = new AttemptContext(activation, input, signal, node.def.exec);
  const workspace = node.def.workspace;
  let session: WorkspaceSession | undefined;
  let update: unknown;
  try {
    if (workspace !== undefined)
      session = await openAttemptWorkspace(workspace, activation, input, ctx);
    // Only a node that declares `reads` pays for a view; the rest get the frozen state as is.
    const state =
      node.reads === undefined
        ? input.state
        : readView(node.reads, input.state, `node "${node.def.name}"`);
    update = await node.fn(state, ctx);
    // The patch is taken before the attempt reports: its update carries it, not the files.
    if (session !== undefined) update = withPatch(update, workspace!.patch, await session.finish());
  } catch (thrown) {
    // A failed attempt's working copy is kept for a look at what the node did.
    await session?.fail().catch(() => {});
    const error = toErrorValue(thrown, activation);
    return reported(ctx, failedAttempt(activation, error, startedAt, input.clock.now()));
  }
  const endedAt = input.clock.now();
  const parsed = parseReturn(graph, node, update);
  if (!parsed.ok) {
    const error = refusalError(where(activation), parsed);
    return reported(ctx, failedAttempt(activation, error, startedAt, endedAt));
  }
  const event: Attempt['event'] =
    input.inputHash === undefined
      ? {
          type: 'completed',
          activation: activation.id,
          attempt: activation.attempt,
          update: parsed.fields,
        }
      : {
          type: 'completed',
          activation: activation.id,
          attempt: activation.attempt,
          update: parsed.fields,
          inputHash: input.inputHash,
        };
  return reported(ctx, { event, startedAt, endedAt });
}

/** A failed attempt, with the time it failed: a retry's backoff counts from there. */
export function failedAttempt(
  activation: Activation,
  error: ErrorValue,
  startedAt: number,
  endedAt: number,
): Attempt {
  return {
    event: {
      type: 'failed',
      activation: activation.id,
      attempt: activation.attempt,
      error,
      at: endedAt,
    },
    startedAt,
    endedAt,
  };
}

/** Adds what the attempt reported (usage, quarantine, turns); most nodes report nothing. */
function reported(ctx: AttemptContext, done: Attempt): Attempt {
  const attempt = withBeat(done, ctx.beat);
  const turns = ctx.turns();
  const report = ctx.report();
  if (report === undefined && turns === undefined) return attempt;
  let event = attempt.event;
  if (report !== undefined) {
    // A failed attempt's quarantine is not booked: only a completed one sets outputs aside.
    // What it emitted before it failed was told all the same.
    if (event.type === 'failed') {
      if (report.usage !== undefined) event = { ...event, usage: report.usage };
      if (report.emitted !== undefined) event = { ...event, emitted: report.emitted };
    } else event = { ...event, ...report };
  }
  return turns === undefined ? { ...attempt, event } : { ...attempt, event, turns };
}

function idleTimedOut(node: RuntimeNode, activation: Activation, idleMs: number): ErrorValue {
  const message = `node "${node.def.name}" sent no heartbeat for ${idleMs} ms`;
  return errorValue(where(activation), 'NODE_TIMEOUT', 'timeout', message, {
    idleTimeoutMs: idleMs,
  });
}

/** The attempt with its last heartbeat, when its node sent one. */
function withBeat(attempt: Attempt, beat: Beat | undefined): Attempt {
  if (beat === undefined || !beat.beaten) return attempt;
  const heartbeat =
    beat.details === undefined ? { at: beat.at } : { at: beat.at, details: beat.details };
  return { ...attempt, heartbeat };
}

function timedOut(node: RuntimeNode, activation: Activation, timeoutMs: number): ErrorValue {
  const message = `node "${node.def.name}" did not finish within ${timeoutMs} ms`;
  return errorValue(where(activation), 'NODE_TIMEOUT', 'timeout', message, { timeoutMs });
}

/**
 * Classifies what a node threw: a WaymarkError keeps its code and class; anything else is
 * transient, with what it says about itself (status, code, name, Retry-After) as its details.
 */
export function toErrorValue(thrown: unknown, activation: Activation): ErrorValue {
  if (isWaymarkError(thrown)) {
    const value = errorValue(
      where(activation),
      thrown.code,
      thrown.errorClass,
      messageOf(thrown),
      thrown.details,
    );
    return { ...value, ...provenance(thrown) };
  }
  const value = errorValue(
    where(activation),
    'NODE_FAILED',
    'transient',
    messageOf(thrown),
    thrownData(thrown),
  );
  return { ...value, ...provenance(thrown) };
}

function where(activation: Activation) {
  return { node: activation.node, activation: activation.id, attempt: activation.attempt };
}
