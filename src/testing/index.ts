// The public surface of `waymark/testing`. It is the only entry that imports fast-check, which is
// an optional peer dependency: users of plain graphs import `waymark` and never load it.

export type {
  CheckReducerOptions,
  LawResult,
  ReducerReport,
} from './check-reducer.js';
export { checkReducer } from './check-reducer.js';
