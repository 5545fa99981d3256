import type { Context, Hono } from 'hono';
import type { MemoryItem } from '../graph/memory.js';
import { memoryOf } from '../runtime/memory/memory-of.js';
import type { ApiContext } from './api-context.js';
import { bodyOf, paramOf } from './request.js';
import { route } from './route.js';
import { routes } from './routes.js';
import { isoTime } from './wire-time.js';

/**
 * The routes of the memory kept across runs, over the server's store: what `memoryOf(store)`
 * does, through HTTP. Writes made here belong to no run and are recorded in no history.
 */
export function memoryRoutes(app: Hono, api: ApiContext): void {
  const memory = memoryOf(api.store);
  // `users.u1`: the parts of a namespace joined by periods, which no part may hold. Hono gives
  // the parameter decoded, so a part with an encoded `/` or `%` arrives as written.
  const address = (c: Context) => [paramOf(c, 'namespace').split('.'), paramOf(c, 'key')] as const;

  route(app, routes.searchMemory, async (c) => {
    const { prefix, filter, limit, offset } = await bodyOf(c, routes.searchMemory.body);
    const items = await memory.search(prefix, {
      ...(filter !== undefined && { filter }),
      ...(limit !== undefined && { limit }),
      ...(offset !== undefined && { offset }),
    });
    return c.json({ items: items.map(wireItem) });
  });

  route(app, routes.listMemoryNamespaces, async (c) => {
    const body = await bodyOf(c, routes.listMemoryNamespaces.body);
    const options = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
    return c.json({ namespaces: await memory.listNamespaces(options) });
  });

  route(app, routes.getMemory, async (c) => {
    const item = await memory.get(...address(c));
    return c.json({ item: item === undefined ? null : wireItem(item) });
  });

  route(app, routes.putMemory, async (c) => {
    const { value, ttlMs } = await bodyOf(c, routes.putMemory.body);
    const [namespace, key] = address(c);
    const item = await memory.put(namespace, key, value, ttlMs === undefined ? {} : { ttlMs });
    return c.json(wireItem(item));
  });

  route(app, routes.deleteMemory, async (c) => {
    return c.json({ deleted: await memory.delete(...address(c)) });
  });
}

/** An item as the API sends it: its times in ISO 8601. */
function wireItem(item: MemoryItem): Record<string, unknown> {
  return {
    ...item,
    createdAt: isoTime(item.createdAt),
    updatedAt: isoTime(item.updatedAt),
    expiresAt: item.expiresAt === null ? null : isoTime(item.expiresAt),
  };
}
