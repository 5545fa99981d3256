import { resume } from '../runtime/local/resume.js';
import type { Store } from '../store/store.js';
import type { ApiContext } from './api-context.js';

/** How often a server looks for what is due, by default. */
export const defaultWakePollMs = 1_000;

/** How many due timers one look reads: the rest are read at the next. */
const batch = 100;

/**
 * The server as a host of the runs it serves: every `pollMs` it reads what is due with one
 * indexed query (`dueTimers`: a sleep's wake, a wait's deadline, a run's deadline) and resumes
 * each waiting run of a graph it serves, in this process, as `POST /runs/:id/resume` would. The
 * run's lease makes that happen once: a run a worker or another server holds is refused to this
 * one (`RUN_OWNED`) and left to it, and a run already woken owes nothing more. Returns the stop.
 *
 * @example
 * const stop = wakeDue(api, 1_000); // ... stop() when the server closes
 */
export function wakeDue(api: ApiContext, pollMs = defaultWakePollMs): () => void {
  const { store } = api;
  const waking = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const look = async (): Promise<void> => {
    for (const runId of await dueRuns(store)) {
      if (waking.has(runId)) continue;
      const record = await store.getRun(runId);
      // A run that is running is its driver's; one that stopped has nothing to wake.
      if (record?.status !== 'waiting') continue;
      const graph = [...api.graphs()].find((g) => g.name === record.graph);
      if (graph === undefined) continue;
      waking.add(runId);
      await api
        .launch(runId, async (watcher, drain) => {
          try {
            return await resume(store, graph, runId, { ...drain, watch: watcher });
          } finally {
            waking.delete(runId);
          }
        })
        // Refused (another process holds the run, or its graph changed): nothing was written.
        .catch(() => waking.delete(runId));
    }
  };
  const next = (): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      look()
        // A store that cannot be reached for a moment: the next look tries again.
        .catch(() => {})
        .finally(next);
    }, pollMs);
    // The loop never keeps a process alive on its own.
    timer.unref();
  };
  next();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/** The runs with a timer due now, each once, soonest first. */
async function dueRuns(store: Store): Promise<string[]> {
  const due = await store.dueTimers(Date.now(), batch);
  return [...new Set(due.map((t) => t.runId))];
}
