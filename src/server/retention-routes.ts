import type { Hono } from 'hono';
import { deleteRun, deleteThread } from '../runtime/ops/retention.js';
import type { DeletedRun } from '../store/run-removal.js';
import type { ApiContext } from './api-context.js';
import { paramOf, queryOf } from './request.js';
import { route } from './route.js';
import { routes } from './routes.js';
import { isoTime } from './wire-time.js';

/** The routes that delete runs: one run, or a thread (docs/time.md, "Retention"). */
export function retentionRoutes(app: Hono, api: ApiContext): void {
  const { store } = api;
  const wire = (runs: readonly DeletedRun[]) => ({
    runs: runs.map((r) => ({
      runId: r.id,
      graph: r.graph,
      status: r.status,
      createdAt: isoTime(r.createdAt),
    })),
  });

  route(app, routes.deleteRun, async (c) => {
    const force = queryOf(c, routes.deleteRun.query).force === 'true';
    return c.json(wire([await deleteRun(store, paramOf(c, 'id'), { force })]));
  });

  route(app, routes.deleteThread, async (c) => {
    const force = queryOf(c, routes.deleteThread.query).force === 'true';
    return c.json(wire(await deleteThread(store, paramOf(c, 'id'), { force })));
  });
}
