/** The rules a history is checked against, one name each. */
export const historyRules = [
  /** A run's events are numbered 1, 2, 3 ... up to its seq: no gap, no repeat. */
  'sequence',
  /** An event that is not JSON of a run event. */
  'unreadable',
  /** No activation completed twice. */
  'completed-twice',
  /** No body started after its activation's completion was committed. */
  'started-after-completion',
  /** No two holders at the same lease epoch of one run, or of one task. */
  'epoch-shared',
  /** Every effect key applied once, and the run recorded the result that was applied. */
  'effect-applied-twice',
  'effect-result-differs',
  /** Every wait answered at most once, and only a wait the store holds answered. */
  'wait-answered-twice',
  /** The state at each kept snapshot equals a replay of the events before it. */
  'replay-differs',
] as const;

/** One rule's name. */
export type HistoryRule = (typeof historyRules)[number];

/** A place where the history breaks a rule: the rule, the run, and what is wrong, in one line. */
export interface Violation {
  readonly rule: HistoryRule;
  /** The run it is about; absent for an effect key the log applied twice. */
  readonly runId?: string;
  readonly activation?: string;
  readonly message: string;
}
