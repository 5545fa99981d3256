import { z } from 'zod';

// The wire shapes of concurrency limits: a queued run, in GET /queued and in a run's view.

export const queuedRun = z
  .object({
    runId: z.string(),
    graph: z.string(),
    key: z.string().describe("the run's key, from its graph's limits.key"),
    concurrency: z.number().int().describe('how many runs of the key may run at once'),
    since: z.iso.datetime().describe('when it was queued (ISO 8601, UTC)'),
    position: z.number().int().describe("its place in its key's line: 1 starts next"),
  })
  .describe("a run queued behind its graph's concurrency limit: recorded waiting, not started");

export const queuedQuery = z.strictObject({
  graph: z.string().optional().describe('only runs of this graph'),
  key: z.string().optional().describe('only runs of this key'),
});

export const queuedList = z.object({
  queued: z.array(queuedRun).describe('oldest first: the order they start in'),
});
