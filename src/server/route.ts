import type { Context, Hono } from 'hono';
import type { RouteSpec } from './routes.js';

/** Registers a handler under its route's method and path (the table the OpenAPI document reads). */
export function route(
  app: Hono,
  spec: RouteSpec,
  handler: (c: Context) => Response | Promise<Response>,
): void {
  app.on(spec.method.toUpperCase(), spec.path, handler);
}
