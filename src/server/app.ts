import { timingSafeEqual } from 'node:crypto';
import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { streamSSE } from 'hono/streaming';
import { WaymarkError } from '../error/waymark-error.js';
import type { CompiledGraph } from '../graph/compiled.js';
import { renderGraph } from '../graph/render.js';
import { answer } from '../runtime/answer.js';
import { cancel } from '../runtime/cancel.js';
import { inspect } from '../runtime/inspect.js';
import { threadLabel } from '../runtime/labels.js';
import { patchState } from '../runtime/patch.js';
import { resume } from '../runtime/resume.js';
import { run } from '../runtime/run.js';
import type { RunResult } from '../runtime/run-types.js';
import { history } from '../runtime/states.js';
import type { StreamEvent } from '../runtime/stream.js';
import { continueThread } from '../runtime/thread.js';
import { seqOfOffset, watch } from '../runtime/watch.js';
import type { RunRecord, Store, StoredStatus } from '../store/store.js';
import { storedStatuses } from '../store/store.js';
import { badRequest, httpError } from './http-errors.js';

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
}

/** The API and the runs it drives in this process, which `drain()` waits for. */
export interface App {
  readonly hono: Hono;
  /** Resolves when every run the server started, resumed or continued has stopped. */
  drain(): Promise<void>;
}

const defaultMaxBodyBytes = 1024 * 1024;

/**
 * The HTTP API over a store (`waymark serve`): graphs, runs (start, list, get, history, the
 * state at a step), a run's events as Server-Sent Events resumable with `Last-Event-ID`, waits
 * (list, answer), and cancel, resume, continue (a thread's next run), patch. Every request
 * carries the bearer token; errors are `{ error: { code, message, details } }` with the status
 * the code calls for, and a refused request changes nothing. A run the API starts or moves on
 * runs in this process; the request is answered once its first step is recorded (202).
 *
 * @example
 * const { hono } = createApp({ store, graphs: [triage], token });
 */
export function createApp(options: AppOptions): App {
  const { store, token } = options;
  const graphs = new Map(options.graphs.map((g) => [g.name, g]));
  const inFlight = new Set<Promise<unknown>>();
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

  /** A graph the server has, by name. */
  const graphNamed = (name: string): CompiledGraph => {
    const graph = graphs.get(name);
    if (graph === undefined) {
      throw new WaymarkError(
        'GRAPH_NOT_SERVED',
        `this server has no graph "${name}"; it serves ${[...graphs.keys()].map((n) => `"${n}"`).join(', ') || 'none'}`,
        { retryable: false, details: { graph: name } },
      );
    }
    return graph;
  };
  /** A stored run and its graph. */
  const runAndGraph = async (runId: string): Promise<[RunRecord, CompiledGraph]> => {
    const record = await store.getRun(runId);
    if (record === undefined) {
      throw new WaymarkError('RUN_NOT_FOUND', `there is no run "${runId}"`, { retryable: false });
    }
    return [record, graphNamed(record.graph)];
  };
  /**
   * Starts a run's move in this process and answers once its first step is recorded (or it
   * refused, which the request then reports): the run goes on after the response.
   */
  const launch = (
    runId: string,
    move: (watcher: (event: StreamEvent) => void) => Promise<RunResult>,
  ): Promise<void> =>
    new Promise((resolve, reject) => {
      let started = false;
      const start = () => {
        if (started) return;
        started = true;
        resolve();
      };
      const moving = move(start).then(
        (result) => {
          start();
          options.onBackground?.(runId, result);
        },
        (error: unknown) => {
          if (started) options.onBackground?.(runId, error);
          else reject(error);
        },
      );
      inFlight.add(moving);
      void moving.finally(() => inFlight.delete(moving));
    });

  app.get('/graphs', (c) =>
    c.json({
      graphs: [...graphs.values()].map((g) => ({
        name: g.name,
        hash: g.hash,
        version: g.version,
        mermaid: renderGraph(g.def, { format: 'mermaid' }),
      })),
    }),
  );

  app.get('/runs', async (c) => {
    const status = c.req.query('status');
    if (status !== undefined && !storedStatuses.includes(status as StoredStatus)) {
      throw badRequest(`status must be one of ${storedStatuses.join(', ')}, not "${status}"`);
    }
    const limit = whole(c.req.query('limit') ?? '50', 'limit', 1, 500);
    const offset = cursorOffset(c.req.query('cursor'));
    const graph = c.req.query('graph');
    const thread = c.req.query('thread');
    const listed = await store.listRuns({
      ...(status !== undefined && { status: status as StoredStatus }),
      ...(graph !== undefined && { graph }),
      ...(thread !== undefined && { labels: { [threadLabel]: thread } }),
      limit: offset + limit + 1,
    });
    const page = listed.slice(offset, offset + limit);
    const next = listed.length > offset + limit ? cursorOf(offset + limit) : null;
    return c.json({ runs: page.map(runJson), next });
  });

  app.post('/runs', async (c) => {
    const body = await jsonBody(c);
    const graph = graphNamed(text(body.graph, 'graph'));
    const runId = body.runId === undefined ? crypto.randomUUID() : text(body.runId, 'runId');
    await launch(runId, (watcher) =>
      run(graph, (body.input ?? {}) as never, { store, runId, watch: watcher }),
    );
    return c.json({ runId, status: (await store.getRun(runId))?.status ?? 'running' }, 202);
  });

  app.get('/runs/:id', async (c) => {
    const [, graph] = await runAndGraph(c.req.param('id'));
    const view = await inspect(store, graph, c.req.param('id'));
    return c.json({
      run: runJson(view.run),
      status: view.snapshot.status,
      state: view.snapshot.state,
      pending: view.snapshot.pending.map((a) => a.id),
      path: view.trace.path,
      ...('error' in view.snapshot && { error: view.snapshot.error }),
    });
  });

  app.get('/runs/:id/trace', async (c) => {
    const [, graph] = await runAndGraph(c.req.param('id'));
    return c.json((await inspect(store, graph, c.req.param('id'))).trace);
  });

  app.get('/runs/:id/history', async (c) => {
    const runId = c.req.param('id');
    const [, graph] = await runAndGraph(runId);
    const after = c.req.query('after');
    const page = await history(store, graph, runId, {
      ...(after !== undefined && { after: whole(after, 'after', 0) }),
      limit: whole(c.req.query('limit') ?? '100', 'limit', 1, 1000),
    });
    return c.json({ steps: page.steps, next: page.next ?? null });
  });

  app.get('/runs/:id/steps/:seq', async (c) => {
    const runId = c.req.param('id');
    const [record, graph] = await runAndGraph(runId);
    const seq = whole(c.req.param('seq'), 'seq', 0, record.seq);
    const { steps } = await history(store, graph, runId, {
      ...(seq > 0 && { after: seq - 1 }),
      limit: 1,
    });
    return c.json(steps[0]);
  });

  app.get('/runs/:id/events', async (c) => {
    const runId = c.req.param('id');
    const [, graph] = await runAndGraph(runId);
    const after = c.req.header('last-event-id') ?? c.req.query('after');
    // Refused before the stream opens, with its code; then the headers go out at once, even
    // when the next event is days away (a run that waits).
    if (after !== undefined) seqOfOffset(after);
    return streamSSE(c, async (sse) => {
      // A client that goes away stops the watch, even one waiting days for the next event.
      const stop = new AbortController();
      sse.onAbort(() => stop.abort());
      const options = { signal: stop.signal, ...(after !== undefined && { after }) };
      for await (const event of watch(store, graph, runId, options)) {
        if (stop.signal.aborted) break;
        await sse.writeSSE({ id: event.offset, event: event.type, data: JSON.stringify(event) });
      }
    });
  });

  app.get('/runs/:id/waits', async (c) => {
    const runId = c.req.param('id');
    await runAndGraph(runId);
    const open = c.req.query('open');
    const waits = await store.listWaits(
      runId,
      open === undefined ? {} : { open: open !== 'false' },
    );
    return c.json({
      waits: waits.map((w) => ({
        requestId: w.requestId,
        node: w.node,
        activation: w.activation,
        request: JSON.parse(w.request) as unknown,
        openedAt: w.openedAt,
        answer: w.answer === null ? null : (JSON.parse(w.answer) as unknown),
        answeredBy: w.answeredBy,
        closedAt: w.closedAt ?? null,
      })),
    });
  });

  app.post('/runs/:id/waits/:request/answer', async (c) => {
    const runId = c.req.param('id');
    const [, graph] = await runAndGraph(runId);
    const body = await jsonBody(c);
    const requestId = decodeURIComponent(c.req.param('request'));
    await answer(store, runId, requestId, body.answer, { by: text(body.by ?? 'api', 'by') });
    await launch(runId, (watcher) => resume(store, graph, runId, { watch: watcher }));
    return c.json({ runId, status: (await store.getRun(runId))?.status }, 202);
  });

  app.post('/runs/:id/resume', async (c) => {
    const runId = c.req.param('id');
    const [, graph] = await runAndGraph(runId);
    await launch(runId, (watcher) => resume(store, graph, runId, { watch: watcher }));
    return c.json({ runId, status: (await store.getRun(runId))?.status }, 202);
  });

  app.post('/runs/:id/cancel', async (c) => {
    const runId = c.req.param('id');
    const [, graph] = await runAndGraph(runId);
    const body = await jsonBody(c);
    const reason =
      body.reason === undefined ? 'cancelled through the API' : text(body.reason, 'reason');
    const after = await cancel(store, graph, runId, { reason });
    return c.json({ runId, status: after.status });
  });

  app.post('/runs/:id/continue', async (c) => {
    const runId = c.req.param('id');
    const [, graph] = await runAndGraph(runId);
    const body = await jsonBody(c);
    const next = body.runId === undefined ? crypto.randomUUID() : text(body.runId, 'runId');
    const input = (body.input ?? {}) as Record<string, unknown>;
    await launch(next, (watcher) =>
      continueThread(store, graph, runId, input, { runId: next, watch: watcher }),
    );
    return c.json({ runId: next, status: (await store.getRun(next))?.status }, 202);
  });

  app.post('/runs/:id/patch', async (c) => {
    const runId = c.req.param('id');
    const [, graph] = await runAndGraph(runId);
    const body = await jsonBody(c);
    const update = body.update;
    if (typeof update !== 'object' || update === null || Array.isArray(update))
      throw badRequest('update must be an object of state fields');
    const after = await patchState(store, graph, runId, update as Record<string, unknown>, {
      by: text(body.by, 'by'),
      reason: text(body.reason, 'reason'),
    });
    return c.json({ runId, status: after.status, state: after.state });
  });

  return {
    hono: app,
    async drain() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}

/** A run record as the API shows it. */
function runJson(r: RunRecord) {
  return {
    runId: r.id,
    graph: r.graph,
    graphHash: r.graphHash,
    status: r.status,
    seq: r.seq,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    labels: r.labels === null ? {} : (JSON.parse(r.labels) as Record<string, string>),
  };
}

/** The request's JSON object body; refused (400) when it is not one. */
async function jsonBody(c: Context): Promise<Record<string, unknown>> {
  const raw = await c.req.text();
  if (raw.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw badRequest('the request body is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw badRequest('the request body must be a JSON object');
  return value as Record<string, unknown>;
}

function text(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw badRequest(`${name} must be a non-empty string`);
  return value;
}

function whole(value: string, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max)
    throw badRequest(`${name} must be a whole number from ${min} to ${max}, not "${value}"`);
  return n;
}

// A cursor is opaque to clients: the offset of the next page, newest first.
function cursorOf(offset: number): string {
  return Buffer.from(JSON.stringify({ offset })).toString('base64url');
}

function cursorOffset(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  try {
    const { offset } = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as {
      offset: unknown;
    };
    if (typeof offset === 'number' && Number.isInteger(offset) && offset >= 0) return offset;
  } catch {
    // falls through to the refusal
  }
  throw badRequest('cursor is not one this server gave (use the "next" of a page)');
}
