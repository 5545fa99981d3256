import type { ExecutionRecord } from './execution-log.js';
import type { RecordedRun } from './recorded.js';
import type { Violation } from './violation.js';

// The rules that need no graph: they read the stored rows and the execution log only.

interface ParsedEvent {
  readonly seq: number;
  readonly at: number;
  readonly type: string;
  readonly activation?: string;
}

/** The run's events as JSON, with a violation for each that is not a run event. */
export function parseEvents(recorded: RecordedRun, out: Violation[]): ParsedEvent[] {
  const runId = recorded.run.id;
  const parsed: ParsedEvent[] = [];
  for (const stored of recorded.events) {
    let value: unknown;
    try {
      value = JSON.parse(stored.event);
    } catch {
      value = undefined;
    }
    const event = value as { type?: unknown; activation?: unknown } | undefined;
    if (typeof event !== 'object' || event === null || typeof event.type !== 'string') {
      out.push({
        rule: 'unreadable',
        runId,
        message: `run "${runId}": event ${stored.seq} is not a run event`,
      });
      continue;
    }
    parsed.push({
      seq: stored.seq,
      at: stored.at,
      type: event.type,
      ...(typeof event.activation === 'string' && { activation: event.activation }),
    });
  }
  return parsed;
}

/** Events are numbered 1 ... the run's seq, each once. */
export function checkSequence(recorded: RecordedRun, out: Violation[]): void {
  const runId = recorded.run.id;
  recorded.events.forEach((stored, i) => {
    if (stored.seq !== i + 1)
      out.push({
        rule: 'sequence',
        runId,
        message: `run "${runId}": event ${i + 1} of its history has seq ${stored.seq}`,
      });
  });
  if (recorded.events.length !== recorded.run.seq)
    out.push({
      rule: 'sequence',
      runId,
      message: `run "${runId}" is at seq ${recorded.run.seq} with ${recorded.events.length} events`,
    });
}

/** The seq and time of each activation's first completion; a second one is a violation. */
export function checkCompletions(
  runId: string,
  events: readonly ParsedEvent[],
  out: Violation[],
): Map<string, ParsedEvent> {
  const completed = new Map<string, ParsedEvent>();
  for (const event of events) {
    if (event.type !== 'completed' || event.activation === undefined) continue;
    const first = completed.get(event.activation);
    if (first === undefined) completed.set(event.activation, event);
    else
      out.push({
        rule: 'completed-twice',
        runId,
        activation: event.activation,
        message: `run "${runId}": activation ${event.activation} completed at seq ${first.seq} and again at seq ${event.seq}`,
      });
  }
  return completed;
}

/** No body of an activation starts after its completion was committed (give or take `skewMs`). */
export function checkStartsBeforeCompletion(
  runId: string,
  completed: ReadonlyMap<string, ParsedEvent>,
  attempts: readonly Extract<ExecutionRecord, { type: 'attempt' }>[],
  skewMs: number,
  out: Violation[],
): void {
  for (const attempt of attempts) {
    const done = completed.get(attempt.activation);
    if (done === undefined || attempt.at <= done.at + skewMs) continue;
    out.push({
      rule: 'started-after-completion',
      runId,
      activation: attempt.activation,
      message: `run "${runId}": activation ${attempt.activation} attempt ${attempt.attempt} started in ${attempt.holder} ${attempt.at - done.at} ms after its completion was committed (seq ${done.seq})`,
    });
  }
}

/** An answer is applied once per wait, and only to a wait the store holds. */
export function checkAnswers(
  recorded: RecordedRun,
  events: readonly ParsedEvent[],
  out: Violation[],
): void {
  const runId = recorded.run.id;
  const answered = new Map<string, number>();
  for (const event of events) {
    if (event.type !== 'answered' || event.activation === undefined) continue;
    const first = answered.get(event.activation);
    if (first !== undefined)
      out.push({
        rule: 'wait-answered-twice',
        runId,
        activation: event.activation,
        message: `run "${runId}": the wait of ${event.activation} was answered at seq ${first} and again at seq ${event.seq}`,
      });
    else answered.set(event.activation, event.seq);
  }
  const waits = new Map(recorded.waits.map((w) => [w.activation, w]));
  for (const [activation, seq] of answered) {
    const wait = waits.get(activation);
    if (wait?.answer == null)
      out.push({
        rule: 'wait-answered-twice',
        runId,
        activation,
        message: `run "${runId}": an answer to ${activation} was applied at seq ${seq}, but the store holds ${wait === undefined ? 'no such wait' : 'no answer to it'}`,
      });
  }
}

/** No two holders took one lease at one epoch: a run's own, or one task's. */
export function checkEpochs(records: readonly ExecutionRecord[], out: Violation[]): void {
  const holders = new Map<string, { runId: string; activation?: string; holders: Set<string> }>();
  for (const record of records) {
    if (record.type === 'effect' || record.epoch === undefined) continue;
    // An attempt is a task's; a lease record without an activation is the run's own lease.
    const scope = record.activation ?? '';
    const key = `${record.runId}\u0000${scope}\u0000${record.epoch}`;
    const entry = holders.get(key) ?? {
      runId: record.runId,
      ...(record.activation !== undefined && { activation: record.activation }),
      holders: new Set<string>(),
    };
    entry.holders.add(record.holder);
    holders.set(key, entry);
  }
  for (const [key, entry] of holders) {
    if (entry.holders.size < 2) continue;
    const epoch = key.split('\u0000')[2];
    const what = entry.activation === undefined ? 'its lease' : `task ${entry.activation}`;
    out.push({
      rule: 'epoch-shared',
      runId: entry.runId,
      ...(entry.activation !== undefined && { activation: entry.activation }),
      message: `run "${entry.runId}": ${what} was held at epoch ${epoch} by ${[...entry.holders].join(' and ')}`,
    });
  }
}

/** Each key applied once at its receiver, with the result the run's ledger recorded. */
export function checkEffects(
  runs: readonly RecordedRun[],
  records: readonly ExecutionRecord[],
  out: Violation[],
): void {
  const ledger = new Map<string, { runId: string; result: string }>();
  for (const { run, effects } of runs)
    for (const e of effects) ledger.set(e.key, { runId: run.id, result: e.result });
  const applied = new Map<string, Extract<ExecutionRecord, { type: 'effect' }>>();
  for (const record of records) {
    if (record.type !== 'effect') continue;
    const recorded = ledger.get(record.key);
    const runId = recorded === undefined ? {} : { runId: recorded.runId };
    if (applied.has(record.key)) {
      out.push({
        rule: 'effect-applied-twice',
        ...runId,
        message: `effect ${record.key} was applied twice (at ${applied.get(record.key)!.at} and ${record.at})`,
      });
      continue;
    }
    applied.set(record.key, record);
    if (recorded !== undefined && record.result !== undefined && record.result !== recorded.result)
      out.push({
        rule: 'effect-result-differs',
        ...runId,
        message: `effect ${record.key}: the receiver answered ${record.result}, the run recorded ${recorded.result}`,
      });
  }
}
