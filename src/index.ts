// The public surface of `waymark`. Every export is named: nothing reaches users by accident.

export type { ErrorClass, ErrorCode } from './error/codes.js';
export { errorCodes } from './error/codes.js';
export type { ErrorCause, ErrorValue } from './error/error-value.js';
export type { WaymarkErrorOptions } from './error/waymark-error.js';
export { isWaymarkError, permanentError, WaymarkError } from './error/waymark-error.js';

export type { GraphOptions, MapOptions, NodeOptions } from './graph/builder.js';
export { GraphBuilder, graph } from './graph/builder.js';
export type { CompiledGraph } from './graph/compiled.js';
export type { Diagnostic, DiagnosticCode, Severity } from './graph/diagnostic.js';
export { formatDiagnostics, warningCodes } from './graph/diagnostic.js';
export type { End } from './graph/end.js';
export { END } from './graph/end.js';
export type { BestPolicy, JoinPolicyInput } from './graph/join.js';
export { all, any, best, quorum } from './graph/join.js';
export type { NodeKind } from './graph/kinds.js';
export type { PersonNode, PersonOptions } from './graph/person.js';
export { person } from './graph/person.js';
export type { Reducer } from './graph/reducers.js';
export { append, max, mergeByKey, min, replace, sum, union } from './graph/reducers.js';
export type { RenderOptions, RunOverlay } from './graph/render.js';
export { renderGraph } from './graph/render.js';
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
  RetryOptions,
  RetryPolicy,
  RouteDef,
  RouterFn,
  Spend,
  SubgraphDef,
  Tolerance,
  TurnRecord,
  Usage,
} from './graph/types.js';
export { validate } from './graph/validate.js';
export type { AnswerOptions } from './runtime/answer.js';
export { answer } from './runtime/answer.js';
export type { CancelOptions } from './runtime/cancel.js';
export { cancel } from './runtime/cancel.js';
export type { Clock } from './runtime/clock.js';
export { initialSnapshot } from './runtime/core/checkpoint.js';
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
export type { EnqueueAllOptions, EnqueueOptions } from './runtime/enqueue.js';
export { enqueue, enqueueAll } from './runtime/enqueue.js';
export { loadTrace } from './runtime/history.js';
export type { RunView } from './runtime/inspect.js';
export { inspect } from './runtime/inspect.js';
export { previousLabel, threadLabel } from './runtime/labels.js';
export type { PatchOptions } from './runtime/patch.js';
export { patchState } from './runtime/patch.js';
export type { ResumeOptions } from './runtime/resume.js';
export { resume } from './runtime/resume.js';
export type { RewindOptions } from './runtime/rewind.js';
export { rewind } from './runtime/rewind.js';
export { run } from './runtime/run.js';
export { defaultMaxSteps } from './runtime/run-limits.js';
export type { AttemptStart, RunOptions, RunResult } from './runtime/run-types.js';
export type { HistoryOptions, HistoryPage, HistoryStep } from './runtime/states.js';
export { history } from './runtime/states.js';
export type { StreamEvent, StreamEventBody, StreamOptions } from './runtime/stream.js';
export { compareOffsets, streamEventTypes } from './runtime/stream.js';
export type {
  AttemptEnded,
  AttemptScope,
  SegmentEnd,
  SegmentStart,
  SegmentTelemetry,
  Telemetry,
} from './runtime/telemetry.js';
export type { ContinueOptions } from './runtime/thread.js';
export { continueThread } from './runtime/thread.js';
export type { Trace, TraceEntry } from './runtime/trace.js';
export type { TraceNode } from './runtime/trace-tree.js';
export { nestTrace } from './runtime/trace-tree.js';
export type { WatchOptions } from './runtime/watch.js';
export { watch } from './runtime/watch.js';
export type { WorkerEvent, WorkerOptions } from './runtime/worker.js';
export { Worker } from './runtime/worker.js';

export type { MemoryStoreOptions } from './store/memory-store.js';
export { MemoryStore } from './store/memory-store.js';
export type {
  ClaimedTask,
  Commit,
  EffectRecord,
  EffectStore,
  FinishedTask,
  InboxRecord,
  Lease,
  LeaseClaim,
  LeaseRecord,
  LoadedRun,
  MemoRecord,
  MemoStore,
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
  WorkKind,
  WorkQueue,
} from './store/store.js';
export { storeFormatVersion } from './store/store.js';
