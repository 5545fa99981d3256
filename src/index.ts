// The public surface of `waymark`. Every export is named: nothing reaches users by accident.

export type { Amounts, Unbounded } from './cost/amounts.js';
export type { Bound, NodeBound, PathStep } from './cost/bound.js';
export { boundOf } from './cost/bound.js';
export type { BoundLimits, CostlyNode, OverLimit } from './cost/budget.js';
export { overBudget } from './cost/budget.js';
export { parseBudget } from './cost/budget-text.js';
export type { ExpectedNotes } from './cost/cost-notes.js';
export { costNotes } from './cost/cost-notes.js';
export type { ErrorClass, ErrorCode } from './error/codes.js';
export { errorCodes } from './error/codes.js';
export type { ErrorCause, ErrorValue } from './error/error-value.js';
export type { ThrownData } from './error/thrown-data.js';
export type { WaymarkErrorOptions } from './error/waymark-error.js';
export { isWaymarkError, permanentError, WaymarkError } from './error/waymark-error.js';
export { GraphBuilder, graph } from './graph/builder.js';
export type {
  GraphOptions,
  MapOptions,
  NodeOptions,
  WorkspaceOptions,
} from './graph/builder-options.js';
export type { CompiledGraph } from './graph/compiled.js';
export type { Diagnostic, DiagnosticCode, Severity } from './graph/diagnostic.js';
export { formatDiagnostics, warningCodes } from './graph/diagnostic.js';
export type { Duration, DurationUnit } from './graph/duration.js';
export { parseDuration } from './graph/duration.js';
export type { End } from './graph/end.js';
export { END } from './graph/end.js';
export type { EventNode, EventOptions } from './graph/event.js';
export { event } from './graph/event.js';
export type { BestPolicy, JoinPolicyInput } from './graph/join.js';
export { all, any, best, patches, quorum } from './graph/join.js';
export type { NodeKind } from './graph/kinds.js';
export type {
  Memory,
  MemoryItem,
  MemoryNamespaceOptions,
  MemoryPutOptions,
  MemoryScalar,
  MemorySearchOptions,
} from './graph/memory.js';
export type { NodeDefaults } from './graph/node-defaults.js';
export { type ParentCommand, parent } from './graph/parent-goto.js';
export type { PersonNode, PersonOptions } from './graph/person.js';
export { person } from './graph/person.js';
export type { Reducer } from './graph/reducers.js';
export { append, max, mergeByKey, min, replace, sum, union } from './graph/reducers.js';
export type { CostOverlay, RenderOptions, RunOverlay } from './graph/render.js';
export { renderGraph } from './graph/render.js';
export type {
  FinishedStatus,
  RetentionOptions,
  RetentionPolicy,
} from './graph/retention.js';
export { finishedStatuses } from './graph/retention.js';
export type { SleepNode, SleepOptions } from './graph/sleep.js';
export { sleep } from './graph/sleep.js';
export type { MapItem, SubgraphOptions } from './graph/subgraph.js';
export type {
  Budget,
  EdgeDef,
  ExecOptions,
  ExecResult,
  FanOutDef,
  GraphDef,
  JoinDef,
  JoinPolicy,
  JoinSummary,
  NodeContext,
  NodeDef,
  NodeFn,
  RateLimit,
  RetryOptions,
  RetryPolicy,
  RouteDef,
  RouterFn,
  Spend,
  SpendLimits,
  SubgraphDef,
  Tolerance,
  ToolCallRecord,
  TurnRecord,
  Usage,
  Workspace,
} from './graph/types.js';
export { clear, overwrite, remove } from './graph/update-markers.js';
export { validate } from './graph/validate.js';
export type { Patch, PatchFile, WorkspaceDef } from './graph/workspace.js';
export { patchSchema, workspacePatch } from './graph/workspace.js';
export type { Clock } from './runtime/clock.js';
export { initialSnapshot } from './runtime/core/checkpoint.js';
export { defaultRetryWhen } from './runtime/core/retry-when.js';
export type {
  Activation,
  Blocked,
  Branch,
  BranchRef,
  BranchStatus,
  Command,
  FanOut,
  GraphStamp,
  OpenWait,
  Outcome,
  QuarantineEntry,
  RunEvent,
  RunLimits,
  RunStatus,
  Snapshot,
  StepResult,
} from './runtime/core/snapshot.js';
export { step } from './runtime/core/step.js';
export type { ResumeOptions } from './runtime/local/resume.js';
export { resume } from './runtime/local/resume.js';
export type { RewindOptions } from './runtime/local/rewind.js';
export { rewind } from './runtime/local/rewind.js';
export { run } from './runtime/local/run.js';
export { defaultMaxSteps } from './runtime/local/run-limits.js';
export {
  defaultNamespaceLimit,
  defaultSearchLimit,
  memoryOf,
} from './runtime/memory/memory-of.js';
export type { AnswerOptions } from './runtime/ops/answer.js';
export { answer } from './runtime/ops/answer.js';
export type { CancelOptions } from './runtime/ops/cancel.js';
export { cancel } from './runtime/ops/cancel.js';
export { clearCache } from './runtime/ops/clear-cache.js';
export type {
  Cost,
  Expected,
  ExpectedOptions,
  NodeExpectation,
} from './runtime/ops/expected.js';
export { expectedCost } from './runtime/ops/expected.js';
export { loadTrace } from './runtime/ops/history.js';
export type { RunView } from './runtime/ops/inspect.js';
export { inspect } from './runtime/ops/inspect.js';
export { previousLabel, threadLabel } from './runtime/ops/labels.js';
export type { PatchOptions } from './runtime/ops/patch.js';
export { patchState } from './runtime/ops/patch.js';
export type { Plan, PlanStep, RewindPlanOptions } from './runtime/ops/plan.js';
export { planResume, planRewind } from './runtime/ops/plan.js';
export type { PruneOptions, PruneResult } from './runtime/ops/retention.js';
export { deleteRun, deleteThread, prune } from './runtime/ops/retention.js';
export { sweepRetention } from './runtime/ops/retention-sweep.js';
export type { SignalOptions, SignalTarget } from './runtime/ops/signal.js';
export {
  defaultSignalTtlMs,
  expireSignals,
  listSignals,
  signal,
} from './runtime/ops/signal.js';
export type { HistoryOptions, HistoryPage, HistoryStep } from './runtime/ops/states.js';
export { history } from './runtime/ops/states.js';
export type { ContinueOptions } from './runtime/ops/thread.js';
export { continueThread } from './runtime/ops/thread.js';
export type { AttemptStart, RunOptions, RunResult } from './runtime/run-types.js';
export type { Schedule, ScheduleOptions } from './runtime/schedule/schedule.js';
export {
  getSchedule,
  listSchedules,
  pauseSchedule,
  removeSchedule,
  resumeSchedule,
  schedule,
} from './runtime/schedule/schedule.js';
export { tickRunId } from './runtime/schedule/tick.js';
export type { StreamEvent, StreamEventBody, StreamOptions } from './runtime/watch/stream.js';
export { compareOffsets, streamEventTypes } from './runtime/watch/stream.js';
export type {
  AttemptEnded,
  AttemptScope,
  SegmentEnd,
  SegmentStart,
  SegmentTelemetry,
  Telemetry,
} from './runtime/watch/telemetry.js';
export type { Trace, TraceEntry } from './runtime/watch/trace.js';
export type { TraceNode } from './runtime/watch/trace-tree.js';
export { nestTrace } from './runtime/watch/trace-tree.js';
export type { WatchOptions } from './runtime/watch/watch.js';
export { watch } from './runtime/watch/watch.js';
export type { EnqueueAllOptions, EnqueueOptions } from './runtime/worker/enqueue.js';
export { enqueue, enqueueAll } from './runtime/worker/enqueue.js';
export type { WorkerEvent, WorkerOptions, WorkerStatus } from './runtime/worker/worker.js';
export { Worker } from './runtime/worker/worker.js';
export type { MemoryStoreOptions } from './store/memory-store.js';
export { MemoryStore } from './store/memory-store.js';
export type { RateDecision, RateRequest, RateStore, RateWindow } from './store/rates.js';
export { keepsRates, RATE_HOLD_MS, RATE_WINDOW_MS } from './store/rates.js';
export type { DeletedRun, DeleteOptions, RunRemoval } from './store/run-removal.js';
export type {
  CatchUpPolicy,
  NewSchedule,
  OverlapPolicy,
  ScheduleRecord,
  ScheduleState,
  ScheduleStore,
} from './store/schedule-store.js';
export { catchUpPolicies, overlapPolicies } from './store/schedule-store.js';
export type {
  EventWait,
  SignalFilter,
  SignalRecord,
  SignalSent,
  SignalStore,
} from './store/signal-store.js';
export { keepsSignals } from './store/signal-store.js';
export type {
  ClaimedTask,
  Commit,
  EffectRecord,
  EffectStore,
  FinishedTask,
  InboxRecord,
  ItemRecord,
  ItemScalar,
  ItemSearch,
  ItemStore,
  Lease,
  LeaseClaim,
  LeaseRecord,
  LoadedRun,
  MemoRecord,
  MemoStore,
  NewItem,
  NewRun,
  RunFilter,
  RunLog,
  RunOwnership,
  RunRecord,
  RunUsage,
  Store,
  StoredEvent,
  StoredStatus,
  TaskRecord,
  TimerRecord,
  TimerStore,
  WaitRecord,
  WaitStore,
  WorkClaim,
  WorkerRecord,
} from './store/store.js';
export { storeFormatVersion } from './store/store.js';
export type {
  ClaimedRun,
  Inbox,
  RunClaims,
  TaskQueue,
  WorkerRegistry,
  WorkKind,
  WorkQueue,
  WorkSignals,
} from './store/work-queue.js';
export { servesWorkers } from './store/work-queue.js';
export type { ConflictHunk } from './workspace/conflicts.js';
export type { MergeConflict } from './workspace/merge.js';
export { workspaceRoot } from './workspace/paths.js';
export { endRunWorkspaces } from './workspace/retention.js';
