// Which waymark the scenarios measure. By default bench/run.ts compiles src/ with tsc into
// bench/.dist (what users import from the package) and passes its path in
// BENCH_WAYMARK_BUILD; without it (a scenario started by hand, or `--source`), src/ runs
// through tsx, whose esbuild transform adds a `__name()` call to every closure it creates.

import { pathToFileURL } from 'node:url';
import type * as Waymark from '../../src/index.js';
import type * as WaymarkPostgres from '../../src/postgres.js';
import type * as WaymarkSqlite from '../../src/sqlite.js';

const build = process.env.BENCH_WAYMARK_BUILD;

export const wm: typeof Waymark = build
  ? await import(pathToFileURL(build).href)
  : await import('../../src/index.js');

/** How waymark was loaded, for the report. */
export const waymarkOrigin = build
  ? (process.env.BENCH_WAYMARK_ORIGIN ?? 'tsc build of src/')
  : 'src/ through tsx (esbuild transform)';

/**
 * The `waymark/sqlite` entry of the same build (or src/sqlite.ts through tsx). A function, not a
 * top-level import, so only the scenarios that use it load better-sqlite3.
 */
export async function loadWaymarkSqlite(): Promise<typeof WaymarkSqlite> {
  return build
    ? await import(new URL('sqlite.js', pathToFileURL(build)).href)
    : await import('../../src/sqlite.js');
}

/** The `waymark/postgres` entry of the same build (or src/postgres.ts through tsx), like the above. */
export async function loadWaymarkPostgres(): Promise<typeof WaymarkPostgres> {
  return build
    ? await import(new URL('postgres.js', pathToFileURL(build)).href)
    : await import('../../src/postgres.js');
}
