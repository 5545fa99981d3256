import type { ErrorValue } from '../../error/error-value.js';
import type { Attempt } from '../attempt/execute.js';
import type { Activation, Outcome, RunEvent } from '../core/snapshot.js';
import type { TraceEntry } from '../watch/trace.js';

/**
 * Turns what happened to attempts into trace entries, one per attempt. Entries for a step are
 * built before its commit (they are part of it) and kept only once it landed, so a commit that
 * must be taken again (a conflict) does not record them twice.
 */
export class TraceRecorder {
  readonly #entries: TraceEntry[] = [];
  readonly #onEntry: ((entry: TraceEntry) => void) | undefined;

  constructor(onEntry?: (entry: TraceEntry) => void) {
    this.#onEntry = onEntry;
  }

  /** Every entry recorded so far, in order. */
  get entries(): readonly TraceEntry[] {
    return this.#entries;
  }

  /** The entry for the attempt a step's outcome is about, or none (the event changed nothing). */
  entryFor(
    outcome: Outcome | undefined,
    event: RunEvent,
    attempt: Attempt | undefined,
    now: number,
  ): TraceEntry | undefined {
    if (outcome === undefined) return undefined;
    const { activation } = outcome;
    // A wait resolved by an answer or a timeout did not run an attempt: it starts and ends now.
    const startedAt = attempt?.startedAt ?? now;
    const endedAt = attempt?.endedAt ?? now;
    const usage =
      (event.type === 'completed' || event.type === 'failed') && event.activation === activation.id
        ? event.usage
        : undefined;
    return entry(activation, startedAt, endedAt, outcome.status, outcome.retrying, outcome.error, {
      reused: attempt?.reused === true,
      usage,
      turns: attempt?.turns,
      heartbeat: attempt?.heartbeat,
    });
  }

  /** Entries for attempts in flight that the run stopped, or a join cancelled: discarded. */
  cancelled(
    inFlight: Iterable<{ readonly activation: Activation; readonly startedAt: number }>,
    now: number,
  ): TraceEntry[] {
    return [...inFlight].map(({ activation, startedAt }) =>
      entry(activation, startedAt, now, 'cancelled', false, undefined, undefined),
    );
  }

  /** Keeps entries whose commit landed, and tells the caller's progress callback of each. */
  accept(entries: readonly TraceEntry[]): void {
    for (const e of entries) {
      this.#entries.push(e);
      this.#onEntry?.(e);
    }
  }
}

function entry(
  activation: Activation,
  startedAt: number,
  endedAt: number,
  status: TraceEntry['status'],
  retried: boolean,
  error: ErrorValue | undefined,
  extra:
    | {
        readonly reused: boolean;
        readonly usage: TraceEntry['usage'];
        readonly turns: TraceEntry['turns'];
        readonly heartbeat?: TraceEntry['heartbeat'];
      }
    | undefined,
): TraceEntry {
  const e: { -readonly [K in keyof TraceEntry]: TraceEntry[K] } = {
    node: activation.node,
    activation: activation.id,
    parent: activation.parent,
    attempt: activation.attempt,
    startedAt,
    durationMs: endedAt - startedAt,
    status,
    retried,
  };
  if (activation.scope !== undefined) e.within = activation.scope;
  // Most steps report nothing besides their update: no extras for them.
  if (extra !== undefined) {
    if (extra.reused) e.reused = true;
    if (extra.usage !== undefined) e.usage = extra.usage;
    if (extra.turns !== undefined) e.turns = extra.turns;
    if (extra.heartbeat !== undefined) e.heartbeat = extra.heartbeat;
  }
  if (error === undefined) return e;
  const { code, class: errorClass, message, stack, cause } = error;
  return {
    ...e,
    error: {
      code,
      class: errorClass,
      message,
      ...(stack !== undefined && { stack }),
      ...(cause !== undefined && { cause }),
    },
  };
}
