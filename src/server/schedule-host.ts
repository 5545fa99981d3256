import { isWaymarkError } from '../error/waymark-error.js';
import type { Clock } from '../runtime/clock.js';
import { resume } from '../runtime/local/resume.js';
import { scheduleLoop } from '../runtime/schedule/schedule-loop.js';
import { enqueue } from '../runtime/worker/enqueue.js';
import { servesWorkers } from '../store/work-queue.js';
import type { ApiContext } from './api-context.js';

/**
 * The server as a host of the schedules of the graphs it serves: each due tick records its run
 * (`enqueue`, so a worker of the graph may take it as well) and drives it here, as
 * `POST /runs/:id/resume` would; a run a worker took first is refused to the server
 * (`RUN_OWNED`) and left to it. A store without a work queue hosts no schedules. Returns the stop.
 *
 * @example
 * const stop = tickSchedules(api, 1_000); // ... stop() when the server closes
 */
export function tickSchedules(api: ApiContext, pollMs: number): () => void {
  const { store } = api;
  const stop = new AbortController();
  if (!servesWorkers(store)) return () => {};
  void scheduleLoop(
    {
      store,
      graphs: new Map([...api.graphs()].map((g) => [g.name, g])),
      clock: unrefClock,
      pollMs,
      start: async (graph, input, runId) => {
        await enqueue(store, graph, input, { runId, ...api.labelsFor(graph) }).catch(
          (error: unknown) => {
            if (!isWaymarkError(error) || error.code !== 'RUN_EXISTS') throw error;
          },
        );
        await api
          .launch(runId, (watcher, drain) =>
            resume(store, graph, runId, { ...drain, watch: watcher }),
          )
          // Refused (a worker holds the run): it is driven all the same.
          .catch(() => {});
      },
    },
    stop.signal,
  );
  return () => stop.abort();
}

/** Wall time, and sleeps that never keep the process alive on their own (as the wake loop's). */
const unrefClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      signal?.addEventListener('abort', done, { once: true });
    }),
};
