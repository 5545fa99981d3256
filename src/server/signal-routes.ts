import type { Hono } from 'hono';
import type { CompiledGraph } from '../graph/compiled.js';
import { resume } from '../runtime/local/resume.js';
import { listSignals, type SignalTarget, signal } from '../runtime/ops/signal.js';
import type { SignalRecord, SignalSent } from '../store/signal-store.js';
import type { ApiContext } from './api-context.js';
import { bodyOf, paramOf, queryOf } from './request.js';
import { route } from './route.js';
import { routes } from './routes.js';
import { isoTime } from './wire-time.js';

/**
 * The routes of signals for event nodes: what `signal()` and `listSignals()` do, through HTTP.
 * A signal delivered to a waiting run moves it on here, as an answer does.
 */
export function signalRoutes(app: Hono, api: ApiContext): void {
  const { store } = api;

  /** Sends the signal; a delivered one's run is resumed in this process, as after an answer. */
  const send = async (graph: CompiledGraph, target: SignalTarget, name: string, body: Body) => {
    const sent: SignalSent = await signal(store, target, name, body.payload, {
      graph: graph as CompiledGraph<never, never>,
      ...(body.id !== undefined && { id: body.id }),
    });
    const runId = sent.outcome === 'delivered' ? sent.signal.consumedRun : null;
    if (runId === null) return { outcome: sent.outcome, signal: wireSignal(sent.signal) };
    await api.launch(runId, (watcher, drain) =>
      resume(store, graph, runId, { ...drain, watch: watcher }),
    );
    const status = (await store.getRun(runId))?.status;
    return {
      outcome: sent.outcome,
      signal: wireSignal(sent.signal),
      ...(status !== undefined && { status }),
    };
  };

  route(app, routes.signalRun, async (c) => {
    const runId = paramOf(c, 'id');
    const [, graph] = await api.runAndGraph(runId);
    const body = await bodyOf(c, routes.signalRun.body);
    return c.json(await send(graph, runId, paramOf(c, 'name'), body), 202);
  });

  route(app, routes.signalGraph, async (c) => {
    const graph = api.graphNamed(paramOf(c, 'graph'));
    const body = await bodyOf(c, routes.signalGraph.body);
    const target = { graph, key: body.key };
    return c.json(await send(graph, target, paramOf(c, 'name'), body), 202);
  });

  route(app, routes.listSignals, async (c) => {
    const { state } = queryOf(c, routes.listSignals.query);
    const found = await listSignals(store, state === undefined ? {} : { state });
    return c.json({ signals: found.map(wireSignal) });
  });
}

interface Body {
  readonly payload?: unknown;
  readonly id?: string | undefined;
}

/** A signal as the API writes it: its payload parsed, its times as ISO strings. */
function wireSignal(s: SignalRecord) {
  return {
    id: s.id,
    graph: s.graph,
    runId: s.runId,
    key: s.key,
    name: s.name,
    payload: JSON.parse(s.payload) as unknown,
    sentAt: isoTime(s.sentAt),
    expiresAt: isoTime(s.expiresAt),
    consumedRun: s.consumedRun,
    consumedAt: s.consumedAt === null ? null : isoTime(s.consumedAt),
  };
}
