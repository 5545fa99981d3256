// The public surface of `waymark/testing`. It is the only entry that imports fast-check, which is
// an optional peer dependency: users of plain graphs import `waymark` and never load it. The
// store conformance suite imports no test framework: its caller hands it vitest's or jest's.

export type {
  CheckReducerOptions,
  LawResult,
  ReducerReport,
} from './check-reducer.js';
export { checkReducer } from './check-reducer.js';
export type {
  ConformanceOptions,
  Expect,
  Skip,
  StoreFixture,
  TestApi,
} from './store-conformance.js';
export { commitSteps, sampleCommit, sampleRun, storeConformance } from './store-conformance.js';
