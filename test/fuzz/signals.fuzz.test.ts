import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  END,
  errorCodes,
  event,
  graph,
  isWaymarkError,
  listSignals,
  MemoryStore,
  resume,
  run,
  signal,
} from '../../src/index.js';
import { fuzzParameters, fuzzTimeout } from './settings.js';

// Random payloads against an event node's schema, sent to a waiting run or kept for one not
// there yet. A signal is delivered (or kept) exactly when the schema accepts its payload; a
// refusal is a coded WaymarkError (SIGNAL_INVALID), never another exception, and records
// nothing: no signal in the store, the wait still open, no event written.

const Payload = z.object({
  paidCents: z.number().int().min(1),
  currency: z.enum(['EUR', 'USD']).optional(),
  note: z.string().max(8).optional(),
});

const State = z.object({
  orderId: z.string().default('o'),
  paidCents: z.number().default(0),
  currency: z.string().optional(),
  note: z.string().optional(),
});
const orders = graph('fuzz-signals', { state: State })
  .node(
    'paid',
    event({ name: 'payment', schema: Payload, key: (s: z.infer<typeof State>) => s.orderId }),
  )
  .node('ship', () => ({}))
  .edge('paid', 'ship')
  .edge('ship', END)
  .entry('paid')
  .compile();

const known = new Set<string>(errorCodes);

const edgy = fc.oneof(
  fc.constantFrom(
    null,
    undefined,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    -0,
    0,
    1,
    1.5,
    '',
    'EUR',
    'GBP',
    'x'.repeat(9),
    [],
    {},
  ),
  fc.integer({ min: -3, max: 5 }),
  fc.string({ maxLength: 10 }),
);
const payload = fc.oneof(
  fc.record({ paidCents: edgy, currency: edgy, note: edgy, extra: edgy }, { requiredKeys: [] }),
  fc.jsonValue({ maxDepth: 3 }),
  fc.anything({ maxDepth: 2 }),
);

function expectCoded(error: unknown) {
  expect(isWaymarkError(error), String((error as Error)?.stack ?? error)).toBe(true);
  expect(known.has((error as { code: string }).code)).toBe(true);
}

describe('random payloads against the event schema', () => {
  for (const early of [false, true]) {
    it(
      `${early ? 'sent before the run reaches the event' : 'sent to a waiting run'}: recorded exactly when the schema accepts it`,
      async () => {
        let i = 0;
        await fc.assert(
          fc.asyncProperty(payload, async (value) => {
            const store = new MemoryStore();
            const runId = `r${i++}`;
            if (!early)
              expect((await run(orders, { orderId: runId }, { store, runId })).status).toBe(
                'waiting',
              );
            const before = early ? 0 : (await store.getRun(runId))!.seq;
            const accepted = Payload.safeParse(value).success;
            let sent = false;
            try {
              const target = early ? { graph: orders, key: runId } : runId;
              await signal(store, target, 'payment', value, { graph: orders });
              sent = true;
            } catch (error) {
              expectCoded(error);
              expect((error as { code: string }).code).toBe('SIGNAL_INVALID');
            }
            expect(sent, JSON.stringify(value) ?? String(value)).toBe(accepted);
            expect(await listSignals(store)).toHaveLength(accepted ? 1 : 0);
            if (!early) {
              expect((await store.getRun(runId))!.seq).toBe(before);
              expect(await store.listWaits(runId, { open: true })).toHaveLength(accepted ? 0 : 1);
            }
            if (!accepted) return;
            const done = early
              ? await run(orders, { orderId: runId }, { store, runId })
              : await resume(store, orders, runId);
            expect(done.status).toBe('succeeded');
          }),
          fuzzParameters(150),
        );
      },
      fuzzTimeout(60_000),
    );
  }
});
