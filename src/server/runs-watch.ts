import type { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { liveWorkers, movedOnBy } from '../runtime/ops/drivers.js';
import type { RunRecord, Store } from '../store/store.js';
import type { ApiContext } from './api-context.js';
import { route } from './route.js';
import { routes } from './routes.js';

/** How often the listing is read again for a watcher of it: a person's glance, not a hot loop. */
const pollMs = 500;
/** The newest runs whose changes the watch reports, besides every running and waiting one. */
const recent = 100;

/** One run as the watch tells it: enough to tell the page its row changed, and whether it is live. */
interface Watched {
  readonly runId: string;
  readonly status: string;
  readonly seq: number;
  /** For a `running` run: a process or a live worker moves it on (false: interrupted, a resume continues it). */
  readonly live: boolean;
}

/**
 * `GET /watch/runs`: the listing of runs, watched, as Server-Sent Events. An `runs` event is sent
 * at once and again whenever a run among the newest, the running and the waiting ones changes
 * (a step, a status, a lease that lapses), with each one's status, seq and liveness; a client
 * then reads its page again with `GET /runs` and its own filters and cursor. The store has no
 * notifications, so this reads it every half second while someone watches, and stops when they
 * go, or the server stops (before its store closes). Its path is not under `/runs/` so that it
 * never shadows a run's id.
 *
 * @example
 * mountRunsWatch(app, api); // after the token check
 */
export function mountRunsWatch(app: Hono, api: ApiContext): void {
  route(app, routes.watchRuns, (c) =>
    streamSSE(c, async (sse) => {
      const stream = api.openStream();
      const stop = new AbortController();
      stream.signal.addEventListener('abort', () => stop.abort(), { once: true });
      sse.onAbort(() => stop.abort());
      let told = '';
      let n = 0;
      try {
        while (!stop.signal.aborted) {
          const runs = await watched(api.store);
          const now = JSON.stringify(runs);
          if (now !== told && !stop.signal.aborted) {
            told = now;
            await sse.writeSSE({ id: String(++n), event: 'runs', data: JSON.stringify({ runs }) });
          }
          await sleep(pollMs, stop.signal);
        }
      } finally {
        stream.end();
      }
    }),
  );
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}

async function watched(store: Store): Promise<Watched[]> {
  const [running, waiting, newest, workers] = await Promise.all([
    store.listRuns({ status: 'running', limit: 500 }),
    store.listRuns({ status: 'waiting', limit: 500 }),
    store.listRuns({ limit: recent }),
    liveWorkers(store),
  ]);
  const byId = new Map<string, RunRecord>();
  for (const r of [...running, ...waiting, ...newest]) byId.set(r.id, r);
  return [...byId.values()].map((r) => ({
    runId: r.id,
    status: r.status,
    seq: r.seq,
    // Workers hold a run's lease only while they fold it: live workers of its graph move it on.
    live: movedOnBy(r, workers) !== null,
  }));
}
