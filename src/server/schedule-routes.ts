import type { Hono } from 'hono';
import {
  getSchedule,
  listSchedules,
  pauseSchedule,
  removeSchedule,
  resumeSchedule,
  schedule,
} from '../runtime/schedule/schedule.js';
import { scheduleJson } from '../runtime/schedule/schedule-json.js';
import type { ApiContext } from './api-context.js';
import { bodyOf, paramOf } from './request.js';
import { route } from './route.js';
import { routes } from './routes.js';

/** The routes of the schedules of the graphs the server serves (docs/server.md). */
export function scheduleRoutes(app: Hono, api: ApiContext): void {
  const { store } = api;
  const id = (c: Parameters<typeof paramOf>[0]) => decodeURIComponent(paramOf(c, 'id'));

  route(app, routes.listSchedules, async (c) => {
    const served = new Set([...api.graphs()].map((g) => g.name));
    const all = await listSchedules(store);
    return c.json({ schedules: all.filter((s) => served.has(s.graph)).map(scheduleJson) });
  });

  route(app, routes.putSchedule, async (c) => {
    const body = await bodyOf(c, routes.putSchedule.body);
    const graph = api.graphNamed(body.graph);
    const stored = await schedule(store, graph, {
      cron: body.cron,
      input: (body.input ?? {}) as never,
      ...(body.timezone !== undefined && { timezone: body.timezone }),
      ...(body.id !== undefined && { id: body.id }),
      ...(body.overlap !== undefined && { overlap: body.overlap }),
      ...(body.catchUp !== undefined && { catchUp: body.catchUp }),
    });
    return c.json(scheduleJson(stored));
  });

  route(app, routes.getSchedule, async (c) =>
    c.json(scheduleJson(await getSchedule(store, id(c)))),
  );

  route(app, routes.removeSchedule, async (c) => {
    await removeSchedule(store, id(c));
    return c.json({ removed: id(c) });
  });

  route(app, routes.pauseSchedule, async (c) =>
    c.json(scheduleJson(await pauseSchedule(store, id(c)))),
  );

  route(app, routes.resumeSchedule, async (c) =>
    c.json(scheduleJson(await resumeSchedule(store, id(c)))),
  );
}
