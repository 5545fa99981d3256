import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { WaymarkClient } from '../../src/client.js';
import {
  enqueue,
  graph,
  isWaymarkError,
  MemoryStore,
  run,
  type Store,
  type WaymarkError,
} from '../../src/index.js';
import { serve } from '../../src/server.js';
import type { WorkQueue } from '../../src/store/work-queue.js';

// A misspelled input field is refused, never dropped: a zod object would strip it and the run
// would start from the default (`attachments: []`) as if the caller had not said a word.

const Ticket = z.object({
  ticket: z.string(),
  attachments: z.array(z.string()).default([]),
});
const triage = (unknownInput?: 'refuse' | 'strip') =>
  graph('triage', { state: Ticket, ...(unknownInput !== undefined && { unknownInput }) })
    .node('read', (s) => ({ ticket: s.ticket.trim() }), { terminal: true })
    .entry('read')
    .compile();
const misspelled = { ticket: 'x', atachments: ['a.pdf'] };

async function refusal(p: Promise<unknown>): Promise<WaymarkError> {
  const thrown = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isWaymarkError(thrown)) throw new Error(`expected a WaymarkError, got ${String(thrown)}`);
  return thrown;
}

/** A store that fails the test if anything touches it: the refusal comes before any record. */
const untouchable = new Proxy({} as Store & WorkQueue, {
  get: (_t, key) => {
    throw new Error(`the store was touched (${String(key)})`);
  },
});

describe('an input field that is not a state field', () => {
  it('run() refuses it with INPUT_INVALID, naming the field and the one it was likely meant to be', async () => {
    const store = new MemoryStore();
    const error = await refusal(run(triage(), misspelled, { store, runId: 'r' }));

    expect(error.code).toBe('INPUT_INVALID');
    expect(error.message).toBe(
      `INPUT_INVALID: the input of "triage" sets "atachments" (did you mean "attachments"?), which is not a state field; a graph that takes other fields on purpose declares unknownInput: 'strip'`,
    );
    expect(error.details).toEqual([
      {
        path: ['atachments'],
        message: 'not a state field (did you mean "attachments"?)',
      },
    ]);
    expect(await store.getRun('r')).toBeUndefined();
  });

  it('enqueue() refuses it the same way, before the store is touched', async () => {
    const error = await refusal(enqueue(untouchable, triage(), misspelled));

    expect(error.code).toBe('INPUT_INVALID');
    expect(error.message).toContain('did you mean "attachments"?');
  });

  it("a graph that declares unknownInput: 'strip' drops it, as a zod object does", async () => {
    const result = await run(triage('strip'), misspelled);

    expect(result.status).toBe('succeeded');
    expect(result.state).toEqual({ ticket: 'x', attachments: [] });
  });

  it('the HTTP API and waymark/client refuse it with the same code and message', async () => {
    const store = new MemoryStore();
    const served = await serve({ store, graphs: [triage()], token: 't' });
    try {
      const response = await fetch(`${served.url}/runs`, {
        method: 'POST',
        headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
        body: JSON.stringify({ graph: 'triage', input: misspelled }),
      });
      expect(response.status).toBe(400);
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('INPUT_INVALID');
      expect(body.error.message).toContain('did you mean "attachments"?');

      const api = new WaymarkClient({ url: served.url, token: 't' });
      const error = await refusal(api.start('triage', misspelled));
      expect(error.code).toBe('INPUT_INVALID');
      expect(error.message).toContain('did you mean "attachments"?');
      expect(await store.listRuns({})).toEqual([]);
    } finally {
      await served.close();
    }
  });
});
