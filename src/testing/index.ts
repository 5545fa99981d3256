// The public surface of `waymark/testing`. It is the only entry that imports fast-check, which is
// an optional peer dependency: users of plain graphs import `waymark` and never load it. The
// store conformance suite imports no test framework: its caller hands it vitest's or jest's.

export type {
  CheckReducerOptions,
  LawResult,
  ReducerReport,
} from './check-reducer.js';
export { checkReducer } from './check-reducer.js';
export type { CoverageReport, GraphCoverage, KindCoverage } from './coverage/coverage.js';
export { formatCoverage, graphCoverage } from './coverage/coverage.js';
export type { CoverageSkip, Exercised } from './coverage/exercised.js';
export { exercisedBy } from './coverage/exercised.js';
export type { CoverageItem, CoverageKind } from './coverage/items.js';
export { coverageItems } from './coverage/items.js';
export type { HistoryCheckOptions, HistoryReport } from './history/check-history.js';
export { checkHistory, checkRecordedHistory } from './history/check-history.js';
export type { ExecutionRecord } from './history/execution-log.js';
export { executionLine, parseExecutionLog } from './history/execution-log.js';
export type { KeptSnapshot, RecordedHistory, RecordedRun } from './history/recorded.js';
export { readHistory } from './history/recorded.js';
export type { ReplaySkip } from './history/replay.js';
export type { HistoryRule, Violation } from './history/violation.js';
export { historyRules } from './history/violation.js';
export type { PathCase, PathCaseOptions, PathOutcome, PathScript } from './paths/path-cases.js';
export { pathCases } from './paths/path-cases.js';
export type { GraphPath, GraphPathOptions, GraphPaths, PathStep } from './paths/paths.js';
export { graphPaths } from './paths/paths.js';
export type {
  ConformanceOptions,
  Expect,
  Skip,
  StoreFixture,
  TestApi,
} from './store-conformance.js';
export { commitSteps, sampleCommit, sampleRun, storeConformance } from './store-conformance.js';
export type { WorkQueueFixture } from './work-queue-conformance.js';
export { workQueueConformance } from './work-queue-conformance.js';
