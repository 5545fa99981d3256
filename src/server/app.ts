import { timingSafeEqual } from 'node:crypto';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import { WaymarkError } from '../error/waymark-error.js';
import type { CompiledGraph } from '../graph/compiled.js';
import { type Clock, systemClock } from '../runtime/clock.js';
import { defaultRetentionSweepMs, sweepEvery } from '../runtime/ops/retention-sweep.js';
import type { RunResult } from '../runtime/run-types.js';
import { defaultSchedulePollMs } from '../runtime/schedule/schedule-loop.js';
import type { Store } from '../store/store.js';
import { apiContext } from './api-context.js';
import { driveRoutes } from './drive-routes.js';
import { httpError } from './http-errors.js';
import { memoryRoutes } from './memory-routes.js';
import { openApiDocument } from './openapi.js';
import { pageRoutes } from './page-routes.js';
import { readRoutes } from './read-routes.js';
import { retentionRoutes } from './retention-routes.js';
import { tickSchedules } from './schedule-host.js';
import { scheduleRoutes } from './schedule-routes.js';
import { signalRoutes } from './signal-routes.js';
import { uiAssets } from './ui-assets.js';
import { waymarkVersion } from './version.js';
import { defaultWakePollMs, wakeDue } from './wake-loop.js';

/** Options of {@link createApp}. */
export interface AppOptions {
  readonly store: Store;
  /** The graphs whose runs the API reads and drives, by name. */
  readonly graphs: readonly CompiledGraph[];
  /** The bearer token every request must carry. */
  readonly token: string;
  /** Largest request body taken. Default 1 MiB. */
  readonly maxBodyBytes?: number;
  /** Told of what a run driven by the server did once its request was answered (a failure). */
  readonly onBackground?: (runId: string, outcome: RunResult | unknown) => void;
  /**
   * When the server stops (`close()`, SIGTERM), how long the nodes its runs are running may
   * take to finish and be recorded before they are stopped; every run it drives is then given
   * back unfinished and resumable, never cancelled. Default 5,000 ms.
   */
  readonly drainGraceMs?: number;
  /** The built web page's folder (`waymark ui`), served at `/ui/` without the token. */
  readonly ui?: string;
  /**
   * Origins whose pages may call the API from a browser (CORS). Default none: no CORS header is
   * sent, and a page of another origin cannot read a response.
   */
  readonly corsOrigins?: readonly string[];
  /**
   * Labels recorded on every run the API starts of `graph` (a start, a thread's next run).
   * `waymark serve` records each graph's module (`graphFile`), so that the CLI finds the graph
   * of a run the server started, as it does for one it started itself.
   */
  readonly runLabels?: (graph: CompiledGraph) => Readonly<Record<string, string>> | undefined;
  /**
   * How often the server looks for runs of its graphs that are due to wake (a sleep, a wait's
   * deadline), and resumes them here. Default 1,000 ms; 0: never (workers wake them).
   */
  readonly wakePollMs?: number;
  /**
   * The longest the server waits between looks at the schedules of its graphs, whose due ticks
   * it starts and drives here (schedule-host.ts). Default 1,000 ms; 0: never (workers tick them).
   */
  readonly schedulePollMs?: number;
  /**
   * How often the server deletes the finished runs of its graphs past their `retention`
   * (docs/time.md, "Retention"), at most 100 a sweep. Default 60,000 ms; 0: never. Only when
   * one of its graphs declares `retention`.
   */
  readonly retentionSweepMs?: number;
  /** The clock retention counts by. Default: the system's. */
  readonly clock?: Clock;
}

/** The API and the runs it drives in this process, which `drain()` gives back. */
export interface App {
  readonly hono: Hono;
  /**
   * Gives back every run the server started, resumed or continued and still drives
   * (resumable, not cancelled), and resolves when all have stopped.
   */
  drain(): Promise<void>;
  /** Ends every event stream being served; resolves once none reads the store any more. */
  stopStreams(): Promise<void>;
}

const defaultMaxBodyBytes = 1024 * 1024;

/**
 * The HTTP API over a store (`waymark serve`): graphs, runs (start, list, get, history, the
 * state at a step), a run's events as Server-Sent Events resumable with `Last-Event-ID`, waits
 * (list, answer), and cancel, resume, continue (a thread's next run), patch; its OpenAPI
 * document at `/openapi.json`. Every other request carries the bearer token; errors are
 * `{ error: { code, message, details } }` with the status the code calls for, and a refused request changes nothing. A run the API starts or moves on
 * runs in this process; the request is answered once its first step is recorded (202).
 *
 * @example
 * const { hono } = createApp({ store, graphs: [triage], token });
 */
export function createApp(options: AppOptions): App {
  const { token } = options;
  const api = apiContext(
    options.store,
    options.graphs,
    options.onBackground,
    options.drainGraceMs,
    options.runLabels,
  );
  const app = new Hono();
  const expected = Buffer.from(`Bearer ${token}`);

  app.onError((error, c) => {
    const { status, body } = httpError(error);
    return c.json(body, status as 400);
  });
  app.notFound((c) =>
    c.json(
      {
        error: {
          code: 'USAGE_INVALID',
          message: `no route ${c.req.method} ${c.req.path}`,
          details: null,
        },
      },
      404,
    ),
  );
  // Before the token check: a browser's preflight carries no token.
  if (options.corsOrigins !== undefined && options.corsOrigins.length > 0) {
    app.use(
      '*',
      cors({
        origin: [...options.corsOrigins],
        allowMethods: ['GET', 'POST', 'PUT', 'DELETE'],
        allowHeaders: ['authorization', 'content-type', 'last-event-id'],
        maxAge: 600,
      }),
    );
  }
  // The document says what the routes take, and holds no data: it is read without a token.
  app.get('/openapi.json', (c) => c.json(openApiDocument(waymarkVersion)));
  if (options.ui !== undefined) app.route('/', uiAssets(options.ui));
  app.use('*', async (c, next) => {
    const given = Buffer.from(c.req.header('authorization') ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new WaymarkError(
        'AUTH_REQUIRED',
        'this API takes requests with the bearer token the server printed at start (Authorization: Bearer <token>)',
        { retryable: false },
      );
    }
    await next();
  });
  app.use(
    '*',
    bodyLimit({
      maxSize: options.maxBodyBytes ?? defaultMaxBodyBytes,
      onError: () => {
        throw new WaymarkError(
          'REQUEST_TOO_LARGE',
          `the request body is larger than this server takes (${options.maxBodyBytes ?? defaultMaxBodyBytes} bytes)`,
          { retryable: false },
        );
      },
    }),
  );

  readRoutes(app, api);
  driveRoutes(app, api);
  memoryRoutes(app, api);
  scheduleRoutes(app, api);
  signalRoutes(app, api);
  retentionRoutes(app, api);
  pageRoutes(app, api);
  const wakePollMs = options.wakePollMs ?? defaultWakePollMs;
  const stopWaking = wakePollMs > 0 ? wakeDue(api, wakePollMs) : () => {};
  const schedulePollMs = options.schedulePollMs ?? defaultSchedulePollMs;
  const stopTicking = schedulePollMs > 0 ? tickSchedules(api, schedulePollMs) : () => {};
  const sweeping = new AbortController();
  void sweepEvery(
    options.store,
    options.graphs,
    {
      everyMs: options.retentionSweepMs ?? defaultRetentionSweepMs,
      clock: options.clock ?? systemClock,
    },
    sweeping.signal,
  );

  return {
    hono: app,
    drain: () => {
      stopWaking();
      stopTicking();
      sweeping.abort();
      return api.drain();
    },
    stopStreams: () => api.stopStreams(),
  };
}
