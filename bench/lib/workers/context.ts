// What every part of the worker benchmarks shares: waymark and its PostgreSQL store from the
// bench's build, the benchmark graphs built from that copy, the build the worker processes load,
// and a pool for the bench's own statements.

import { readFileSync } from 'node:fs';
import type pg from 'pg';
import type * as Waymark from '../../../src/index.js';
import type { PostgresStore } from '../../../src/postgres.js';
import { type Settings, settingsFromEnv } from '../measure.js';
import { adminPool, checkServer, pgUrl } from '../pg.js';
import type { Row } from '../report.js';
import { loadWaymarkPostgres, wm } from '../waymark.js';
import { workerBuild } from './children.js';
import { benchGraphs } from './graphs.mjs';

export interface WorkerBench {
  readonly wm: typeof Waymark;
  readonly graphs: ReturnType<typeof benchGraphs>;
  /** The directory of the build the worker processes import. */
  readonly build: string;
  readonly admin: pg.Pool;
  /** `--quick`: fewer units and repetitions; a smoke test, not numbers. */
  readonly quick: boolean;
  readonly settings: Settings;
  /** A store on `schema`, its schema created; `notify: false` polls only. */
  store(
    schema: string,
    options?: { readonly notify?: boolean; readonly poolSize?: number },
  ): Promise<PostgresStore>;
}

/** What one part reports: its rows of the table, the notes under it, and its raw numbers. */
export interface PartReport {
  readonly title: string;
  /** The peer the rows compare against, if any. */
  readonly peerName?: string;
  readonly rows: readonly Row[];
  readonly notes: readonly string[];
  readonly details: Readonly<Record<string, unknown>>;
}

export async function workerBench(): Promise<WorkerBench> {
  const admin = adminPool(4);
  await checkServer(admin);
  const { PostgresStore } = await loadWaymarkPostgres();
  const settings = settingsFromEnv();
  return {
    wm,
    graphs: benchGraphs(wm),
    build: workerBuild(),
    admin,
    // bench/run.ts --quick sets 3 repetitions; a full run has at least 7.
    quick: settings.reps < 7,
    settings,
    store: (schema, options = {}) =>
      PostgresStore.open({
        connectionString: pgUrl,
        schema,
        poolSize: options.poolSize ?? 8,
        ...(options.notify !== undefined && { notify: options.notify }),
      }),
  };
}

/** The installed version of a package, for the report. */
export function versionOf(pkg: string): string {
  const url = new URL(`../../../node_modules/${pkg}/package.json`, import.meta.url);
  return (JSON.parse(readFileSync(url, 'utf8')) as { version: string }).version;
}
