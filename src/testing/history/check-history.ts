import type { CompiledGraph } from '../../graph/compiled.js';
import type { Store } from '../../store/store.js';
import type { ExecutionRecord } from './execution-log.js';
import { type RecordedHistory, readHistory } from './recorded.js';
import { checkReplay, type ReplaySkip } from './replay.js';
import {
  checkAnswers,
  checkCompletions,
  checkEffects,
  checkEpochs,
  checkSequence,
  checkStartsBeforeCompletion,
  parseEvents,
} from './rules.js';
import type { Violation } from './violation.js';

/** Options of {@link checkHistory} and {@link checkRecordedHistory}. */
export interface HistoryCheckOptions {
  /** What ran where and when (see `parseExecutionLog`); none: only the store's rows are checked. */
  readonly log?: readonly ExecutionRecord[];
  /** The graphs the runs ran under, to check replays; a run of a graph not given is not replayed. */
  readonly graphs?: readonly CompiledGraph[];
  /**
   * How far the clocks of the processes that wrote the log may be ahead of the one that stamped
   * the commits, in ms. Default 0: one machine, one clock.
   */
  readonly skewMs?: number;
  /** Only these runs (default: every run the store lists). */
  readonly runs?: readonly string[];
}

/** What a history check found: every violation, and how much it looked at. */
export interface HistoryReport {
  readonly ok: boolean;
  readonly violations: readonly Violation[];
  readonly checked: {
    readonly runs: number;
    readonly events: number;
    readonly attempts: number;
    /** Runs whose replay was checked. */
    readonly replayed: number;
  };
  /** Runs whose replay was not checked, and why (no graph given, or the graph changed since). */
  readonly notReplayed: readonly { readonly runId: string; readonly reason: ReplaySkip }[];
}

/**
 * Checks a store's recorded history, with what the harness logged of which attempt ran where
 * and when, against the promises waymark makes: no activation completed twice, no body started
 * after its activation's completion was committed, no two holders at one lease epoch, every
 * effect key applied once, every wait answered at most once, and each kept snapshot equal to a
 * replay of the events before it. Reads through the public `Store` interface only.
 *
 * @example
 * const report = await checkHistory(store, { log: parseExecutionLog(text).records, graphs: [g] });
 * expect(report.violations).toEqual([]);
 */
export async function checkHistory(
  store: Store,
  options: HistoryCheckOptions = {},
): Promise<HistoryReport> {
  return checkRecordedHistory(await readHistory(store, options.runs), options);
}

/**
 * {@link checkHistory} over a history already read (`readHistory`), or built by hand.
 *
 * @example
 * const report = checkRecordedHistory(await readHistory(store), { log });
 */
export function checkRecordedHistory(
  history: RecordedHistory,
  options: HistoryCheckOptions = {},
): HistoryReport {
  const log = options.log ?? [];
  const skewMs = options.skewMs ?? 0;
  const graphs = new Map((options.graphs ?? []).map((g) => [g.name, g]));
  const attemptsOf = new Map<string, Extract<ExecutionRecord, { type: 'attempt' }>[]>();
  for (const record of log) {
    if (record.type !== 'attempt') continue;
    attemptsOf.set(record.runId, [...(attemptsOf.get(record.runId) ?? []), record]);
  }
  const violations: Violation[] = [];
  const notReplayed: { runId: string; reason: ReplaySkip }[] = [];
  let events = 0;
  for (const recorded of history.runs) {
    const runId = recorded.run.id;
    events += recorded.events.length;
    checkSequence(recorded, violations);
    const parsed = parseEvents(recorded, violations);
    const completed = checkCompletions(runId, parsed, violations);
    checkStartsBeforeCompletion(runId, completed, attemptsOf.get(runId) ?? [], skewMs, violations);
    checkAnswers(recorded, parsed, violations);
    const skipped = checkReplay(recorded, graphs.get(recorded.run.graph), violations);
    if (skipped !== undefined) notReplayed.push({ runId, reason: skipped });
  }
  checkEpochs(log, violations);
  checkEffects(history.runs, log, violations);
  return {
    ok: violations.length === 0,
    violations,
    checked: {
      runs: history.runs.length,
      events,
      attempts: log.filter((r) => r.type === 'attempt').length,
      replayed: history.runs.length - notReplayed.length,
    },
    notReplayed,
  };
}
