import type { Hono } from 'hono';
import { withoutSlots } from '../graph/subgraph.js';
import { resume } from '../runtime/local/resume.js';
import { run } from '../runtime/local/run.js';
import { answer } from '../runtime/ops/answer.js';
import { cancel } from '../runtime/ops/cancel.js';
import { patchState } from '../runtime/ops/patch.js';
import { continueThread } from '../runtime/ops/thread.js';
import type { ApiContext } from './api-context.js';
import { bodyOf, paramOf } from './request.js';
import { route } from './route.js';
import { routes } from './routes.js';

/** The routes that move runs: start, answer a wait, resume, cancel, continue a thread, patch. */
export function driveRoutes(app: Hono, api: ApiContext): void {
  const { store } = api;
  const statusOf = async (runId: string) => (await store.getRun(runId))?.status;

  route(app, routes.startRun, async (c) => {
    const body = await bodyOf(c, routes.startRun.body);
    const graph = api.graphNamed(body.graph);
    const runId = body.runId ?? crypto.randomUUID();
    // A run queued behind its graph's limit records no step until it is handed a slot: the
    // request is answered once it is queued.
    let queued = (): void => {};
    const isQueued = new Promise<void>((resolve) => {
      queued = resolve;
    });
    const launched = api.launch(runId, (watcher, drain) =>
      run(graph, (body.input ?? {}) as never, {
        ...drain,
        ...(body.context !== undefined && { context: body.context }),
        ...api.labelsFor(graph),
        store,
        runId,
        watch: watcher,
        onQueued: () => queued(),
      }),
    );
    await Promise.race([launched, isQueued]);
    launched.catch(() => {});
    return c.json({ runId, status: (await statusOf(runId)) ?? 'running' }, 202);
  });

  route(app, routes.answerWait, async (c) => {
    const runId = paramOf(c, 'id');
    const [, graph] = await api.runAndGraph(runId);
    const body = await bodyOf(c, routes.answerWait.body);
    const requestId = decodeURIComponent(paramOf(c, 'request'));
    // Checked against the node's own schema, as `waymark answer` checks it: its defaults fill
    // what the answer leaves out, and its refinements hold.
    await answer(store, runId, requestId, body.answer, { by: body.by ?? 'api', graph });
    await api.launch(runId, (watcher, drain) =>
      resume(store, graph, runId, { ...drain, watch: watcher }),
    );
    return c.json({ runId, status: await statusOf(runId) }, 202);
  });

  route(app, routes.resumeRun, async (c) => {
    const runId = paramOf(c, 'id');
    const [, graph] = await api.runAndGraph(runId);
    const body = await bodyOf(c, routes.resumeRun.body);
    // A move is checked by resume() before it records anything, and launch() answers with what
    // refused before the first step: a bad `goto` is the request's 400, never a background error.
    await api.launch(runId, (watcher, drain) =>
      resume(store, graph, runId, {
        ...drain,
        ...(body.goto !== undefined && { goto: body.goto }),
        watch: watcher,
      }),
    );
    return c.json({ runId, status: await statusOf(runId) }, 202);
  });

  route(app, routes.cancelRun, async (c) => {
    const runId = paramOf(c, 'id');
    const [, graph] = await api.runAndGraph(runId);
    const body = await bodyOf(c, routes.cancelRun.body);
    const reason = body.reason ?? 'cancelled through the API';
    const after = await cancel(store, graph, runId, { reason });
    return c.json({ runId, status: after.status });
  });

  route(app, routes.continueRun, async (c) => {
    const runId = paramOf(c, 'id');
    const [, graph] = await api.runAndGraph(runId);
    const body = await bodyOf(c, routes.continueRun.body);
    const next = body.runId ?? crypto.randomUUID();
    await api.launch(next, (watcher, drain) =>
      continueThread(store, graph, runId, body.input ?? {}, {
        ...drain,
        ...api.labelsFor(graph),
        runId: next,
        watch: watcher,
      }),
    );
    return c.json({ runId: next, status: await statusOf(next) }, 202);
  });

  route(app, routes.patchRun, async (c) => {
    const runId = paramOf(c, 'id');
    const [, graph] = await api.runAndGraph(runId);
    const body = await bodyOf(c, routes.patchRun.body);
    const after = await patchState(store, graph, runId, body.update, {
      by: body.by,
      reason: body.reason,
      ...(body.asNode !== undefined && { asNode: body.asNode }),
    });
    return c.json({ runId, status: after.status, state: withoutSlots(after.state) });
  });
}
