import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { WaymarkClient } from '../../src/client.js';
import { END, graph } from '../../src/index.js';
import { serve } from '../../src/server.js';
import { SqliteStore } from '../../src/sqlite.js';

// Over HTTP a run started behind its graph's concurrency limit is answered at once, queued: its
// view and GET /queued say which key it waits for and its place in line, and a resume of it is
// refused (409 RUN_QUEUED) until it is handed a slot.

const gates = new Map<string, () => void>();
const limited = graph('http-limited', {
  state: z.object({ customer: z.string(), n: z.number().default(0) }),
  limits: { key: (input) => input.customer, concurrency: 1 },
})
  .node('work', async (_s, ctx) => {
    await new Promise<void>((resolve) => gates.set(ctx.runId, resolve));
    return { n: 1 };
  })
  .edge('work', END)
  .entry('work')
  .compile();

describe('concurrency limits over HTTP and waymark/client', () => {
  const dir = mkdtempSync(join(tmpdir(), 'waymark-http-limits-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a queued run is answered at once and says what it waits for', async () => {
    const store = new SqliteStore(join(dir, 'runs.db'));
    const served = await serve({ store, graphs: [limited], token: 't', drainGraceMs: 100 });
    const api = new WaymarkClient({ url: served.url, token: 't' });
    try {
      expect(await api.start('http-limited', { customer: 'c' }, { runId: 'h1' })).toMatchObject({
        status: 'running',
      });
      expect(await api.start('http-limited', { customer: 'c' }, { runId: 'h2' })).toMatchObject({
        status: 'waiting',
      });
      const view = await api.getRun('h2');
      expect(view.status).toBe('waiting');
      expect(view.queued).toMatchObject({
        graph: 'http-limited',
        key: 'c',
        concurrency: 1,
        position: 1,
      });
      expect(typeof view.queued?.since).toBe('number');
      expect((await api.getRun('h1')).queued).toBeUndefined();
      expect((await api.queued()).queued.map((q) => q.runId)).toEqual(['h2']);
      expect((await api.queued({ key: 'other' })).queued).toEqual([]);
      const refused = await api.resume('h2').catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: 'RUN_QUEUED' });
    } finally {
      gates.get('h1')?.();
      await served.close();
      await store.close();
    }
  });
});
