import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  answer,
  append,
  errorCodes,
  graph,
  isWaymarkError,
  MemoryStore,
  patchState,
  person,
  resume,
  run,
  type Store,
} from '../../src/index.js';
import { fuzzParameters, fuzzTimeout } from './settings.js';

// Random answers and patches against their schemas. An answer is recorded exactly when the
// wait's schema accepts it, checked by the node's zod schema (with the graph) or by the JSON
// Schema stored with the wait (without it, as `waymark answer` and the HTTP API do when they have
// no graph): both must agree with zod on a schema JSON Schema can say. A patch applies exactly
// when every field it names is a state field whose schema accepts the value. Whatever is refused
// is a coded WaymarkError, never another exception, and the run is left as it was: the wait
// still open, no event written.

const Answer = z.object({
  approved: z.boolean(),
  note: z.string().max(12).optional(),
  score: z.number().int().min(0).max(10).optional(),
  tags: z
    .array(z.enum(['a', 'b']))
    .max(3)
    .optional(),
});

const State = z.object({
  title: z.string().default('t'),
  n: z.number().default(0),
  tags: z.array(z.string()).default([]),
  approved: z.boolean().default(false),
  note: z.string().optional(),
  score: z.number().optional(),
});

const review = graph('fuzz-answers', { state: State, reducers: { tags: append } })
  .node('draft', () => ({ n: 1 }))
  .node('ask', person({ prompt: 'Ship it?', answer: Answer }))
  .node('ship', () => ({}), { terminal: true })
  .edge('draft', 'ask')
  .edge('ask', 'ship')
  .entry('draft')
  .compile();

const known = new Set<string>(errorCodes);

// Values near the schema's edges, and far from it.
const edgy = fc.oneof(
  fc.constantFrom(
    null,
    undefined,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    -0,
    1.5,
    11,
    '',
    'x'.repeat(13),
    'a',
    [],
    {},
    ['a', 'c'],
    ['a', 'a', 'b', 'b'],
  ),
  fc.boolean(),
  fc.integer({ min: -3, max: 13 }),
  fc.string({ maxLength: 14 }),
  fc.array(fc.constantFrom('a', 'b', 'c', 1), { maxLength: 5 }),
);
const answerValue = fc.oneof(
  fc.record(
    { approved: edgy, note: edgy, score: edgy, tags: edgy, extra: edgy },
    { requiredKeys: [] },
  ),
  fc.jsonValue({ maxDepth: 3 }),
  fc.anything({ maxDepth: 2 }),
);
const who = fc.oneof(fc.constant('ana'), fc.constantFrom('', '  ', 7, undefined));

const patchValue = fc.dictionary(
  fc.constantFrom('title', 'n', 'tags', 'approved', 'note', 'missing', '__proto__', 'constructor'),
  edgy,
  { maxKeys: 4 },
);

async function waitingRun(store: Store, runId: string) {
  const result = await run(review, {}, { store, runId });
  expect(result.status).toBe('waiting');
  return `${runId}/ask:1`;
}

function expectCoded(error: unknown) {
  expect(isWaymarkError(error), String((error as Error)?.stack ?? error)).toBe(true);
  expect(known.has((error as { code: string }).code)).toBe(true);
}

describe('random answers against the wait schema', () => {
  for (const withGraph of [true, false]) {
    it(
      `${withGraph ? 'checked by the zod schema' : 'checked by the stored JSON Schema'}: recorded exactly when the schema accepts it`,
      async () => {
        let i = 0;
        await fc.assert(
          fc.asyncProperty(answerValue, who, async (value, by) => {
            const store = new MemoryStore();
            const runId = `r${i++}`;
            const requestId = await waitingRun(store, runId);
            const before = (await store.getRun(runId))!.seq;
            const accepted =
              Answer.safeParse(value).success && typeof by === 'string' && by.trim() !== '';
            let recorded = false;
            try {
              await answer(store, runId, requestId, value, {
                by: by as string,
                ...(withGraph && { graph: review }),
              });
              recorded = true;
            } catch (error) {
              expectCoded(error);
            }
            expect(recorded, JSON.stringify(value) ?? String(value)).toBe(accepted);
            const [wait] = await store.listWaits(runId);
            expect(wait!.answer !== null).toBe(accepted);
            expect((await store.getRun(runId))!.seq).toBe(before);
            if (accepted) expect((await resume(store, review, runId)).status).toBe('succeeded');
          }),
          fuzzParameters(150),
        );
      },
      fuzzTimeout(60_000),
    );
  }
});

describe('random patches against the state schema', () => {
  it(
    'applied exactly when every field is a state field its schema accepts; else coded, nothing written',
    async () => {
      let i = 0;
      await fc.assert(
        fc.asyncProperty(patchValue, async (update) => {
          const store = new MemoryStore();
          const runId = `p${i++}`;
          await waitingRun(store, runId);
          const before = (await store.getRun(runId))!.seq;
          const fields = Object.keys(update);
          const shape = State.shape as Record<string, z.ZodType>;
          const valid =
            fields.length > 0 &&
            fields.every((f) => Object.hasOwn(shape, f) && shape[f]!.safeParse(update[f]).success);
          let applied = false;
          try {
            const after = await patchState(store, review, runId, update as never, {
              by: 'ops',
              reason: 'fuzz',
            });
            applied = true;
            expect(State.safeParse(after.state).success).toBe(true);
          } catch (error) {
            expectCoded(error);
          }
          expect(applied, JSON.stringify(update)).toBe(valid);
          expect((await store.getRun(runId))!.seq).toBe(before + (valid ? 1 : 0));
        }),
        fuzzParameters(200),
      );
    },
    fuzzTimeout(60_000),
  );
});
