import { isWaymarkError, WaymarkError } from '../error/waymark-error.js';
import type { RunPosition } from '../store/store.js';
import type { Io } from './io.js';
import type { CommandSpec } from './program.js';
import { withExistingStore } from './session.js';

// A run named by the start of its id, as `ls`, the web page and a narrow terminal cut it: the
// command is tried with the id as given, and only when no run has that id are the ids that
// start with it looked up. One match is taken; several are named, and none is chosen.

/** The shortest start of an id looked up: a shorter one names too many runs to be meant. */
const shortest = 4;
const page = 500;
/** How many runs that share a start are named in the refusal. */
const named = 5;

/**
 * The positional run id of `args` replaced by the one run whose id starts with it, when `error`
 * is a RUN_NOT_FOUND for it; undefined when it is not (the error stands).
 * @throws WaymarkError `RUN_NOT_FOUND` (reason `ambiguous`) when several runs' ids start with it.
 */
export async function withFullRunId(
  io: Io,
  command: CommandSpec,
  args: readonly unknown[],
  error: unknown,
): Promise<unknown[] | undefined> {
  if (!isWaymarkError(error) || error.code !== 'RUN_NOT_FOUND') return undefined;
  const at = command.args.findIndex((arg) => arg.name === 'run-id');
  const given = args[at];
  if (at === -1 || typeof given !== 'string' || given.length < shortest) return undefined;
  const ids = await idsStartingWith(io, given);
  if (ids.length === 0 || ids.includes(given)) return undefined;
  if (ids.length > 1) {
    const shown = ids.slice(0, named).join(', ');
    throw new WaymarkError(
      'RUN_NOT_FOUND',
      `there is no run "${given}", and ${ids.length > named ? `more than ${named}` : ids.length} runs' ids start with it: ${shown}`,
      { retryable: false, details: { reason: 'ambiguous', candidates: ids.slice(0, named) } },
    );
  }
  const again = [...args];
  again[at] = ids[0];
  return again;
}

async function idsStartingWith(io: Io, prefix: string): Promise<string[]> {
  const found = await withExistingStore(io, async (store) => {
    const ids: string[] = [];
    let before: RunPosition | undefined;
    for (;;) {
      const runs = await store.listRuns({ limit: page, ...(before !== undefined && { before }) });
      for (const run of runs) if (run.id.startsWith(prefix)) ids.push(run.id);
      const last = runs.at(-1);
      if (runs.length < page || last === undefined || ids.length > named) return ids;
      before = { createdAt: last.createdAt, id: last.id };
    }
  });
  return found?.value ?? [];
}
