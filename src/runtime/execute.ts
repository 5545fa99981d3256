import type { EffectLedger } from '../effects/ledger.js';
import { type ErrorValue, errorValue, provenance } from '../error/error-value.js';
import { isWaymarkError } from '../error/waymark-error.js';
import type { RuntimeNode } from '../graph/compiled.js';
import type { Spend, TurnRecord } from '../graph/types.js';
import { AttemptContext } from './context.js';
import { readView } from './core/read-view.js';
import type { Activation, RunEvent, RunLimits } from './core/snapshot.js';

/** What one attempt needs besides the node: the run's identity, state and signal. */
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
  /** Where the turns an attempt reports are left for its trace entry, by activation id. */
  readonly turns: Map<string, readonly TurnRecord[]>;
}

/**
 * Runs one attempt of one activation and reports it as an event; never rejects. With a
 * `timeoutMs`, the attempt's signal aborts at the limit and the attempt is reported as timed
 * out even if the node ignores the signal; whatever it returns later is discarded.
 */
export function executeAttempt(
  node: RuntimeNode,
  activation: Activation,
  input: AttemptInput,
): Promise<RunEvent> {
  const timeoutMs = node.def.timeoutMs;
  if (timeoutMs === undefined) return invoke(node, activation, input, input.signal);
  const parent = typeof input.signal === 'function' ? input.signal() : input.signal;

  // A controller per attempt only when a timeout needs one: it is the costliest object per step.
  const controller = new AbortController();
  const forward = () => controller.abort(parent.reason);
  if (parent.aborted) forward();
  else parent.addEventListener('abort', forward, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<RunEvent>((resolve) => {
    timer = setTimeout(() => {
      const message = `node "${node.def.name}" did not finish within ${timeoutMs} ms`;
      const error = errorValue(where(activation), 'NODE_TIMEOUT', 'timeout', message, {
        timeoutMs,
      });
      controller.abort(new Error(message));
      resolve({ type: 'failed', activation: activation.id, error });
    }, timeoutMs);
  });
  return Promise.race([invoke(node, activation, input, controller.signal), expired]).finally(() => {
    clearTimeout(timer);
    parent.removeEventListener('abort', forward);
  });
}

async function invoke(
  node: RuntimeNode,
  activation: Activation,
  input: AttemptInput,
  signal: AbortSignal | (() => AbortSignal),
): Promise<RunEvent> {
  const ctx = new AttemptContext(activation, input, signal, node.def.exec);
  try {
    // Only a node that declares `reads` pays for a view; the rest get the frozen state as is.
    const state =
      node.reads === undefined
        ? input.state
        : readView(node.reads, input.state, `node "${node.def.name}"`);
    const update = await node.fn(state, ctx);
    const event: RunEvent =
      input.inputHash === undefined
        ? { type: 'completed', activation: activation.id, update }
        : { type: 'completed', activation: activation.id, update, inputHash: input.inputHash };
    return reported(event, ctx, input);
  } catch (thrown) {
    const error = toErrorValue(thrown, activation);
    return reported({ type: 'failed', activation: activation.id, error }, ctx, input);
  }
}

/** Adds what the attempt reported (usage, quarantine) to its event; most nodes report nothing. */
function reported(event: RunEvent, ctx: AttemptContext, input: AttemptInput): RunEvent {
  const turns = ctx.turns();
  if (turns !== undefined) input.turns.set(ctx.activationId, turns);
  const report = ctx.report();
  if (report === undefined) return event;
  // A failed attempt's quarantine is not booked: only a completed one sets outputs aside.
  if (event.type === 'failed')
    return report.usage === undefined ? event : { ...event, usage: report.usage };
  return { ...event, ...report };
}

/** Classifies what a node threw: a WaymarkError keeps its code and class; anything else is transient. */
function toErrorValue(thrown: unknown, activation: Activation): ErrorValue {
  if (isWaymarkError(thrown)) {
    const message = thrown.message.startsWith(`${thrown.code}: `)
      ? thrown.message.slice(thrown.code.length + 2)
      : thrown.message;
    const value = errorValue(
      where(activation),
      thrown.code,
      thrown.errorClass,
      message,
      thrown.details,
    );
    return { ...value, ...provenance(thrown) };
  }
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  return {
    ...errorValue(where(activation), 'NODE_FAILED', 'transient', message),
    ...provenance(thrown),
  };
}

function where(activation: Activation) {
  return { node: activation.node, activation: activation.id, attempt: activation.attempt };
}
