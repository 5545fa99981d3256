import type { Snapshot } from '../runtime/core/snapshot.js';
import {
  type Resumability,
  resumability as runtimeResumability,
} from '../runtime/ops/resumability.js';
import type { TraceEntry } from '../runtime/watch/trace.js';
import type { RunRecord } from '../store/store.js';
import type { Io } from './io.js';
import { isPostgres } from './location.js';

// What to type next: the commands the CLI suggests after a run stops and under an error. Each
// is written out in full (run id, graph file, --db when one was given), so it can be run as it
// is printed; test/cli/hints.test.ts runs every one of them and checks it is not refused for
// the same reason.

export type { Resumability } from '../runtime/ops/resumability.js';

/**
 * Whether `resume` would continue a run in this checkpoint: the runtime's own rule
 * (`runtime/ops/resumability.ts`), which `resume()` refuses by, so a hint never names a resume that
 * would be refused.
 *
 * @example
 * if (!resumability(run, snapshot).resumable) suggestRewind();
 */
export function resumability(run: Pick<RunRecord, 'seq'>, snapshot: Snapshot): Resumability {
  return runtimeResumability(snapshot, run.seq, Date.now());
}

/**
 * A `waymark` command line as the user should type it: the arguments shell-quoted where
 * needed, and `--db` (and `--graph`) added when this command was given them.
 *
 * @example
 * commandLine(io, ['resume', runId]); // "waymark resume r-1 --db /tmp/w.db"
 */
export function commandLine(
  io: Io,
  args: readonly string[],
  options: { readonly graph?: boolean } = {},
): string {
  const all = [...args];
  if (options.graph !== false && io.about.graphGiven && io.about.graphFile !== undefined) {
    all.push('--graph', io.about.graphFile);
  }
  if (io.dbGiven) all.push(isPostgres(io.flags.db) ? '--store' : '--db', io.flags.db);
  return `waymark ${all.map(shellQuote).join(' ')}`;
}

/** An argument as a POSIX shell reads it back: as it is when safe, else in single quotes. */
export function shellQuote(arg: string): string {
  if (/^[\w@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replaceAll("'", "'\\''")}'`;
}

/**
 * What works for a run `resume` cannot continue: rewinding it to the node that failed (a new
 * run from the checkpoint before it, with the same graph), or, once the graph is fixed, a new
 * run of the graph file that reads back every step whose inputs did not change.
 *
 * @example
 * const next = whatWorks(io, runId, snapshot, entries); // ['waymark rewind r --to plan', ...]
 */
export function whatWorks(
  io: Io,
  runId: string,
  snapshot: Snapshot,
  entries: readonly TraceEntry[],
): string[] {
  const next: string[] = [];
  const target = rewindTarget(snapshot, entries);
  if (target !== undefined) next.push(commandLine(io, ['rewind', runId, '--to', target]));
  if (io.about.graphFile !== undefined) {
    next.push(commandLine(io, ['run', io.about.graphFile, '--reuse', runId], { graph: false }));
  }
  return next;
}

/**
 * The node to rewind to: the one the run's stop error names (it failed for good, or a cap
 * stopped it: a capped node never ran, but ran before), else the node the run stood at (its
 * first pending one, as a cancelled or timed-out run leaves it), else the last one that ran. A
 * failure that `onError` handled is no stop: the run went on past it.
 */
function rewindTarget(snapshot: Snapshot, entries: readonly TraceEntry[]): string | undefined {
  if ('error' in snapshot && entries.some((e) => e.node === snapshot.error.node)) {
    return snapshot.error.node;
  }
  if (snapshot.status === 'failed') {
    const failed = entries.filter((e) => e.status === 'failed').at(-1);
    if (failed !== undefined) return failed.node;
  }
  return snapshot.pending[0]?.node ?? entries.at(-1)?.node;
}
