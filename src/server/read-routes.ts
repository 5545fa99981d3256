import type { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { renderGraph } from '../graph/render.js';
import { withoutSlots } from '../graph/subgraph.js';
import { inspect } from '../runtime/ops/inspect.js';
import { threadLabel } from '../runtime/ops/labels.js';
import { listQueuedRuns, type QueuedRun, queuedRuns } from '../runtime/ops/queued-runs.js';
import { history } from '../runtime/ops/states.js';
import { seqOfOffset, watch } from '../runtime/watch/watch.js';
import type { ApiContext } from './api-context.js';
import { cursorOf, positionOf } from './cursor.js';
import { paramOf, queryOf, wholeIn } from './request.js';
import { route } from './route.js';
import { routes } from './routes.js';
import { runJson } from './run-json.js';
import { isoTime, timeOfQuery, wireEntry, wireEvent } from './wire-time.js';

/** The routes that read: graphs, runs, a run's trace, history, steps, events and waits. */
export function readRoutes(app: Hono, api: ApiContext): void {
  const { store } = api;

  route(app, routes.listGraphs, (c) =>
    c.json({
      graphs: [...api.graphs()].map((g) => ({
        name: g.name,
        hash: g.hash,
        version: g.version,
        mermaid: renderGraph(g.def, { format: 'mermaid' }),
      })),
    }),
  );

  route(app, routes.listRuns, async (c) => {
    const q = queryOf(c, routes.listRuns.query);
    const limit = wholeIn(q.limit ?? '50', 'limit', 1, 500);
    const listed = await store.listRuns({
      ...(q.status !== undefined && { status: q.status }),
      ...(q.graph !== undefined && { graph: q.graph }),
      ...(q.thread !== undefined && { labels: { [threadLabel]: q.thread } }),
      ...(q.since !== undefined && { since: timeOfQuery('since', q.since) }),
      ...(q.until !== undefined && { until: timeOfQuery('until', q.until) }),
      ...(q.cursor !== undefined && { before: positionOf(q.cursor) }),
      limit: limit + 1,
    });
    const page = listed.slice(0, limit);
    const last = page.at(-1);
    const next = listed.length > limit && last !== undefined ? cursorOf(last) : null;
    return c.json({ runs: page.map(runJson), next });
  });

  route(app, routes.getRun, async (c) => {
    const [, graph] = await api.runAndGraph(paramOf(c, 'id'));
    const view = await inspect(store, graph, paramOf(c, 'id'));
    const queued = (await queuedRuns(store, [view.run])).get(view.run.id);
    return c.json({
      run: runJson(view.run),
      // A run queued for a slot has not started: waiting, as the store records it.
      status: queued === undefined ? view.snapshot.status : 'waiting',
      state: withoutSlots(view.snapshot.state),
      pending: view.snapshot.pending.map((a) => a.id),
      path: view.trace.path,
      ...('error' in view.snapshot && { error: view.snapshot.error }),
      ...(queued !== undefined && { queued: queuedJson(queued) }),
    });
  });

  route(app, routes.listQueued, async (c) => {
    const q = queryOf(c, routes.listQueued.query);
    const queued = await listQueuedRuns(store, {
      ...(q.graph !== undefined && { graph: q.graph }),
      ...(q.key !== undefined && { key: q.key }),
    });
    return c.json({ queued: queued.map(queuedJson) });
  });

  route(app, routes.getTrace, async (c) => {
    const [, graph] = await api.runAndGraph(paramOf(c, 'id'));
    const { trace } = await inspect(store, graph, paramOf(c, 'id'));
    return c.json({ entries: trace.entries.map(wireEntry), path: trace.path });
  });

  route(app, routes.getHistory, async (c) => {
    const runId = paramOf(c, 'id');
    const [, graph] = await api.runAndGraph(runId);
    const q = queryOf(c, routes.getHistory.query);
    const page = await history(store, graph, runId, {
      ...(q.after !== undefined && {
        after: wholeIn(q.after, 'after', 0, Number.MAX_SAFE_INTEGER),
      }),
      limit: wholeIn(q.limit ?? '100', 'limit', 1, 1000),
    });
    return c.json({
      steps: page.steps.map((s) => ({ ...s, at: isoTime(s.at) })),
      next: page.next ?? null,
    });
  });

  route(app, routes.getStep, async (c) => {
    const runId = paramOf(c, 'id');
    const [record, graph] = await api.runAndGraph(runId);
    const seq = wholeIn(paramOf(c, 'seq'), 'seq', 0, record.seq);
    const { steps } = await history(store, graph, runId, {
      ...(seq > 0 && { after: seq - 1 }),
      limit: 1,
    });
    const found = steps[0]!;
    return c.json({ ...found, at: isoTime(found.at) });
  });

  route(app, routes.streamEvents, async (c) => {
    const runId = paramOf(c, 'id');
    const [, graph] = await api.runAndGraph(runId);
    const query = queryOf(c, routes.streamEvents.query);
    const after = c.req.header('last-event-id') ?? query.after;
    // A reader stops where the run stops (a client that reads, then answers the wait, is not
    // left hanging on a stream that never ends); `until=end` follows across the waits.
    const until = query.until ?? 'stop';
    // Refused before the stream opens, with its code; then the headers go out at once, even
    // when the next event is days away (a run that waits).
    if (after !== undefined) seqOfOffset(after);
    return streamSSE(c, async (sse) => {
      // A client that goes away stops the watch, even one waiting days for the next event; so
      // does the server stopping, before its store closes.
      const stream = api.openStream();
      const stop = new AbortController();
      stream.signal.addEventListener('abort', () => stop.abort(), { once: true });
      sse.onAbort(() => stop.abort());
      // Ephemeral events of a run this server drives come live, without an id: a client that
      // reconnects resumes after the last recorded event it saw, as a late one never sees them.
      const unsubscribe = api.live.subscribe(runId, (event) => {
        if (!stop.signal.aborted)
          void sse
            .writeSSE({ event: event.type, data: JSON.stringify(wireEvent(event)) })
            .catch(() => {});
      });
      try {
        const options = { signal: stop.signal, until, ...(after !== undefined && { after }) };
        for await (const event of watch(store, graph, runId, options)) {
          if (stop.signal.aborted) break;
          await sse.writeSSE({
            id: event.offset,
            event: event.type,
            data: JSON.stringify(wireEvent(event)),
          });
        }
      } finally {
        unsubscribe();
        stream.end();
      }
    });
  });

  route(app, routes.listWaits, async (c) => {
    const runId = paramOf(c, 'id');
    await api.runAndGraph(runId);
    const { open } = queryOf(c, routes.listWaits.query);
    const waits = await store.listWaits(runId, open === undefined ? {} : { open: open === 'true' });
    return c.json({
      waits: waits.map((w) => ({
        requestId: w.requestId,
        node: w.node,
        activation: w.activation,
        request: JSON.parse(w.request) as unknown,
        openedAt: isoTime(w.openedAt),
        answer: w.answer === null ? null : (JSON.parse(w.answer) as unknown),
        answeredBy: w.answeredBy,
        answeredAt: w.answeredAt === null ? null : isoTime(w.answeredAt),
        closedAt: w.closedAt ? isoTime(w.closedAt) : null,
      })),
    });
  });
}

function queuedJson(q: QueuedRun) {
  return { ...q, since: isoTime(q.since) };
}
