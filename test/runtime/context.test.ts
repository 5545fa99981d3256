// The run's context (LangGraph.js: `context` / `configurable`): a value given when a run starts,
// checked by the graph's context schema, read by every node as ctx.context, kept once with the
// run and never part of its state. See docs/semantics.md, "Run context".
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { WaymarkClient } from '../../src/client.js';
import {
  continueThread,
  END,
  enqueue,
  graph,
  inspect,
  isWaymarkError,
  MemoryStore,
  resume,
  run,
  type Store,
} from '../../src/index.js';
import { serve } from '../../src/server.js';
import { SqliteStore } from '../../src/sqlite.js';
import { describePg, pgStoreForFile } from '../store/fixtures/postgres.js';
import { dyingAt, stores } from '../support/stores.js';
import { workUntilSettled } from '../support/worker-runs.js';

const Context = z.object({ tenant: z.string(), tier: z.enum(['free', 'pro']).default('free') });
const State = z.object({ seen: z.array(z.string()).default([]), greeting: z.string().default('') });

/** greet (reads the context) -> note -> END; every node says what context it saw. */
function greeter(seen: string[] = []) {
  return graph('greeter', { state: State, context: Context })
    .node('greet', (_s, ctx) => {
      // Typed from the schema: no cast.
      const { tenant, tier } = ctx.context;
      seen.push(`greet ${tenant}/${tier}`);
      return { greeting: `hello ${tenant}` };
    })
    .node('note', (_s, ctx) => {
      seen.push(`note ${ctx.context.tenant}`);
      return {};
    })
    .edge('greet', 'note')
    .edge('note', END)
    .entry('greet')
    .compile();
}

const refusal = (e: unknown) => (isWaymarkError(e) ? { code: e.code, message: e.message } : e);

describe('run context', () => {
  it('every node reads the context it was started with, defaults filled, and it is not state', async () => {
    const seen: string[] = [];
    const result = await run(greeter(seen), {}, { context: { tenant: 'acme' } });

    expect(result.status).toBe('succeeded');
    expect(seen).toEqual(['greet acme/free', 'note acme']);
    expect(result.state).toEqual({ seen: [], greeting: 'hello acme' });
  });

  it('a context the schema refuses, or one given to a graph without a schema, is CONTEXT_INVALID and nothing is recorded', async () => {
    const store = new MemoryStore();
    const bad = await run(greeter(), {}, { store, runId: 'bad', context: { tenant: 7 } }).catch(
      refusal,
    );
    expect(bad).toMatchObject({
      code: 'CONTEXT_INVALID',
      message: expect.stringContaining('at tenant'),
    });
    expect(await store.getRun('bad')).toBeUndefined();

    const plain = graph('plain', { state: State })
      .node('a', () => ({}))
      .edge('a', END)
      .entry('a')
      .compile();
    const unwanted = await run(plain, {}, { context: { tenant: 'acme' } }).catch(refusal);
    expect(unwanted).toMatchObject({
      code: 'CONTEXT_INVALID',
      message: expect.stringContaining('declares no context'),
    });
  });

  it('a thread goes on with the context of the run it continues, unless given its own', async () => {
    const seen: string[] = [];
    const g = greeter(seen);
    const store = new MemoryStore();
    await run(g, {}, { store, runId: 't1', context: { tenant: 'acme', tier: 'pro' } });
    await continueThread(store, g, 't1', {}, { runId: 't2' });
    await continueThread(store, g, 't2', {}, { runId: 't3', context: { tenant: 'globex' } });

    expect(seen.filter((s) => s.startsWith('greet'))).toEqual([
      'greet acme/pro',
      'greet acme/pro',
      'greet globex/free',
    ]);
  });
});

describe.each(stores)('run context on %s', (_, makeStore) => {
  it('is kept with the run: a run that died resumes with the same context', async () => {
    const seen: string[] = [];
    const g = greeter(seen);
    const store = makeStore();
    // Seq 1 is the start, 2 greet's completion; the commit of note's never lands.
    const crashed = await run(
      g,
      {},
      {
        store: dyingAt(store, 3),
        runId: 'r',
        context: { tenant: 'acme', tier: 'pro' },
      },
    ).catch((e: unknown) => e);
    expect(String(crashed)).toContain('the process died');

    const resumed = await resume(store, g, 'r');

    expect(resumed.status).toBe('succeeded');
    expect(seen).toEqual(['greet acme/pro', 'note acme', 'note acme']);
    const view = await inspect(store, g, 'r');
    expect(view.snapshot.state).not.toHaveProperty('tenant');
    expect(view.snapshot.limits.context).toEqual({ tenant: 'acme', tier: 'pro' });
  });

  it("is part of a node's input hash only when the node declares readsContext", async () => {
    const Ctx = z.object({ tenant: z.string() });
    const g = graph('hashed', { state: State, context: Ctx })
      .node('blind', () => ({}), { reads: ['seen'] })
      .node('aware', () => ({}), { reads: ['seen'], readsContext: true })
      .edge('blind', 'aware')
      .edge('aware', END)
      .entry('blind')
      .compile();
    const store = makeStore();
    await run(g, {}, { store, runId: 'a', context: { tenant: 'acme' } });
    await run(g, {}, { store, runId: 'b', context: { tenant: 'globex' } });
    const a = await hashes(store, 'a');
    const b = await hashes(store, 'b');

    expect(a.blind).toBeDefined();
    expect(a.blind).toBe(b.blind);
    expect(a.aware).toBeDefined();
    expect(a.aware).not.toBe(b.aware);
  });
});

/** The input hash each node's completion recorded. */
async function hashes(store: Store, runId: string): Promise<Record<string, string | undefined>> {
  const out: Record<string, string | undefined> = {};
  for (const e of await store.events(runId)) {
    const event = JSON.parse(e.event) as { type: string; activation: string; inputHash?: string };
    if (event.type === 'completed') out[event.activation.split(':')[0]!] = event.inputHash;
  }
  return out;
}

describe('run context over HTTP', () => {
  const dir = mkdtempSync(join(tmpdir(), 'waymark-context-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('POST /runs takes a context, and refuses one the schema refuses with 400 CONTEXT_INVALID', async () => {
    const seen: string[] = [];
    const store = new SqliteStore({ path: join(dir, 'runs.db') });
    const served = await serve({ store, graphs: [greeter(seen)], token: 't' });
    try {
      const api = new WaymarkClient({ url: served.url, token: 't' });
      const { runId } = await api.start('greeter', {}, { context: { tenant: 'acme' } });
      for await (const _ of api.events(runId)) {
        // read to the run's end
      }
      expect(seen).toEqual(['greet acme/free', 'note acme']);

      const response = await fetch(`${served.url}/runs`, {
        method: 'POST',
        headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
        body: JSON.stringify({ graph: 'greeter', context: { tier: 'gold' } }),
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: { code: 'CONTEXT_INVALID' } });
    } finally {
      await served.close();
      await store.close();
    }
  });
});

const db = pgStoreForFile();

describePg('run context through a worker on PostgreSQL', () => {
  it('an enqueued run hands its context to the worker that runs each node', async () => {
    const seen: string[] = [];
    const g = greeter(seen);
    const id = await enqueue(db.store, g, {}, { context: { tenant: 'initech', tier: 'pro' } });
    await workUntilSettled(db.store, [g], [id]);
    expect((await db.store.getRun(id))?.status).toBe('succeeded');
    expect(seen).toEqual(['greet initech/pro', 'note initech']);
  });
});
