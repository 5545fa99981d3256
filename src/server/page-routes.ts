import type { Hono } from 'hono';
import { cachedBound } from '../cost/budget.js';
import { describeAmounts } from '../cost/budget-text.js';
import { costNotes } from '../cost/cost-notes.js';
import { rewind } from '../runtime/local/rewind.js';
import { expectedCost } from '../runtime/ops/expected.js';
import { inspect } from '../runtime/ops/inspect.js';
import { planResume, planRewind } from '../runtime/ops/plan.js';
import { noteUpdate } from '../runtime/ops/rewind-note.js';
import { seqOfOffset, watch } from '../runtime/watch/watch.js';
import type { ApiContext } from './api-context.js';
import { bodyOf, paramOf, queryOf } from './request.js';
import { route } from './route.js';
import { routes } from './routes.js';
import { mountRunsWatch } from './runs-watch.js';
import { isoTime, wireEvent } from './wire-time.js';

/**
 * The routes the web page (`waymark ui`) needs beyond the rest of the API, each usable on its
 * own: a graph's declaration as data (`GET /graphs/:name`, to lay it out) and its costs
 * (`GET /graphs/:name/cost`, to note them on it), a run's stream so
 * far as one JSON answer (`GET /runs/:id/recorded`), its quarantine (`GET /runs/:id/quarantine`),
 * the price of a resume or rewind (`GET /runs/:id/plan`), rewind (`POST /runs/:id/rewind`, like
 * `waymark rewind`), and the listing of runs watched live
 * (`GET /watch/runs`). Mounted after the token check; their specs are in the route table.
 *
 * @example
 * pageRoutes(app, api);
 */
export function pageRoutes(app: Hono, api: ApiContext): void {
  const { store } = api;

  route(app, routes.getGraph, (c) => {
    const graph = api.graphNamed(paramOf(c, 'name'));
    return c.json({ name: graph.name, hash: graph.hash, version: graph.version, def: graph.def });
  });

  route(app, routes.getGraphCost, async (c) => {
    const graph = api.graphNamed(paramOf(c, 'name'));
    const bound = cachedBound(graph);
    const expected = await expectedCost(store, graph);
    return c.json({
      ...costNotes(bound, expected),
      total: describeAmounts(bound.total),
      unbounded: bound.unbounded,
      runs: expected.runs.length,
    });
  });

  // What the run's stream has told so far, in one JSON answer: a page opens a long run with it
  // (10,000 steps are 20,000 events: one answer, not 20,000 SSE messages), then follows the SSE
  // stream after `last`.
  route(app, routes.getRecorded, async (c) => {
    const runId = paramOf(c, 'id');
    const [, graph] = await api.runAndGraph(runId);
    const { after } = queryOf(c, routes.getRecorded.query);
    if (after !== undefined) seqOfOffset(after);
    const events: Record<string, unknown>[] = [];
    const options = { follow: false, ...(after !== undefined && { after }) };
    let last: string | undefined;
    for await (const event of watch(store, graph, runId, options)) {
      events.push(wireEvent(event));
      last = event.offset;
    }
    return c.json({ events, last: last ?? after ?? null });
  });

  route(app, routes.getQuarantine, async (c) => {
    const runId = paramOf(c, 'id');
    const [, graph] = await api.runAndGraph(runId);
    const { snapshot } = await inspect(store, graph, runId);
    return c.json({ quarantine: snapshot.quarantine });
  });

  route(app, routes.listEffects, async (c) => {
    const runId = paramOf(c, 'id');
    await api.runAndGraph(runId);
    const effects = await store.listEffects(runId);
    return c.json({
      effects: effects.map((e) => ({
        key: e.key,
        result: JSON.parse(e.result) as unknown,
        at: isoTime(e.at),
      })),
    });
  });

  // The price of a resume or a rewind, before the page offers it (`waymark resume --plan`).
  route(app, routes.getPlan, async (c) => {
    const runId = paramOf(c, 'id');
    const [, graph] = await api.runAndGraph(runId);
    const q = queryOf(c, routes.getPlan.query);
    if (q.to === undefined) return c.json(await planResume(store, graph, runId));
    const update =
      q.note === undefined ? undefined : noteUpdate(graph, q.note, q.noteField ?? 'notes', apiNote);
    const options = { to: q.to, ...(update !== undefined && { update }) };
    return c.json(await planRewind(store, graph, runId, options));
  });

  // A new run from the checkpoint before `to`, like `waymark rewind`; the earlier run stays.
  route(app, routes.rewindRun, async (c) => {
    const runId = paramOf(c, 'id');
    const [, graph] = await api.runAndGraph(runId);
    const body = await bodyOf(c, routes.rewindRun.body);
    const next = body.runId ?? crypto.randomUUID();
    const update =
      body.note === undefined
        ? undefined
        : noteUpdate(graph, body.note, body.noteField ?? 'notes', apiNote);
    await api.launch(next, (watcher) =>
      rewind(store, graph, runId, {
        to: body.to,
        runId: next,
        watch: watcher,
        ...(update !== undefined && { update }),
      }),
    );
    return c.json({ runId: next, status: (await store.getRun(next))?.status ?? 'running' }, 202);
  });

  mountRunsWatch(app, api);
}

/** Over HTTP, a note's missing field is a bad option of the request, named as the API names it. */
const apiNote = { code: 'OPTIONS_INVALID', option: 'noteField' } as const;
