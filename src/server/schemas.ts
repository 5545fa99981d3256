import { z } from 'zod';
import { streamEventTypes } from '../runtime/watch/stream.js';
import { storedStatuses } from '../store/store.js';
import { queuedRun } from './limit-schemas.js';

// What the API takes and gives. Requests are validated with these schemas, and the OpenAPI
// document is generated from them, so the document cannot drift from what the server checks.

const digits = (what: string) => z.string().regex(/^\d+$/, 'must be a whole number').describe(what);

const nonEmpty = (what: string) =>
  z.string().trim().min(1, 'must be a non-empty string').describe(what);

const jsonObject = z.record(z.string(), z.unknown());

/** A point in time a query takes: ms since the epoch, or ISO 8601 (checked by the route). */
const time = (what: string) =>
  z
    .string()
    .regex(/^(\d+|\d{4}-\d{2}-\d{2}.*)$/, 'must be ms since the epoch or an ISO 8601 time')
    .describe(`${what}: ISO 8601 (2026-12-03T08:00:00Z), or ms since the epoch`);

/** A point in time the API gives: ISO 8601 in UTC, to the millisecond. */
const at = (what: string) => z.iso.datetime().describe(`${what} (ISO 8601, UTC)`);

export const listRunsQuery = z.strictObject({
  status: z.enum(storedStatuses).optional().describe('only runs with this status'),
  graph: z.string().optional().describe('only runs of this graph'),
  thread: z.string().optional().describe("only the runs of this thread (a conversation's turns)"),
  since: time('only runs created at or after this time').optional(),
  until: time('only runs created before this time').optional(),
  limit: digits('runs per page, 1 to 500 (default 50)').optional(),
  cursor: z.string().optional().describe('the "next" of the page before'),
});

export const historyQuery = z.strictObject({
  after: digits('steps after this seq').optional(),
  limit: digits('steps per page, 1 to 1000 (default 100)').optional(),
});

export const eventsQuery = z.strictObject({
  after: z
    .string()
    .optional()
    .describe('events after this offset (the header Last-Event-ID wins over it)'),
  until: z
    .enum(['stop', 'end'])
    .optional()
    .describe(
      'where the stream ends: "stop" (the default) once the run stops, waiting or ended; "end" once it ends, following it across its waits',
    ),
});

export const waitsQuery = z.strictObject({
  open: z.enum(['true', 'false']).optional().describe('only open (true) or closed (false) waits'),
});

export const startRunBody = z.strictObject({
  graph: nonEmpty('the graph to run, by name'),
  input: jsonObject.optional().describe("the run's input, as its graph's state fields"),
  context: z
    .unknown()
    .optional()
    .describe("the run's context (ctx.context), valid against its graph's context schema"),
  runId: nonEmpty('the run id to use (default: a new UUID)').optional(),
});

export const answerBody = z.strictObject({
  answer: z.unknown().describe("the answer, valid against the wait's answer schema"),
  by: nonEmpty('who answers (default "api")').optional(),
});

export const cancelBody = z.strictObject({
  reason: nonEmpty('why (default "cancelled through the API")').optional(),
});

export const continueBody = z.strictObject({
  input: jsonObject.optional().describe("the next turn's input, applied through the reducers"),
  runId: nonEmpty("the next run's id (default: a new UUID)").optional(),
});

export const patchBody = z.strictObject({
  update: jsonObject.describe('the state fields to set, through their reducers'),
  by: nonEmpty('who changes the state'),
  reason: nonEmpty('why'),
  asNode: nonEmpty(
    "the patch stands in for this node's completion: what follows it waits for a resume",
  ).optional(),
});

export const emptyBody = z.strictObject({});

export const resumeBody = z.strictObject({
  goto: nonEmpty(
    'move the run to this node first: its pending activations (a failed one, an open wait) are dropped',
  ).optional(),
});

export const rewindBody = z.strictObject({
  to: nonEmpty('the node to run again: the new run starts from the checkpoint before it'),
  note: nonEmpty('a note added to the state first (to a list field, as one item)').optional(),
  noteField: nonEmpty('the state field the note goes to (default "notes")').optional(),
  runId: nonEmpty("the new run's id (default: a new UUID)").optional(),
});

export const planQuery = z.strictObject({
  to: nonEmpty('plan a rewind to this node (absent: plan a resume)').optional(),
  note: nonEmpty("the rewind's note, as POST /runs/:id/rewind takes it").optional(),
  noteField: nonEmpty('the state field the note goes to (default "notes")').optional(),
});

export const recordedQuery = z.strictObject({
  after: z.string().optional().describe('events after this offset'),
});

// Responses: documented, and checked against what the server sends by the API's tests.

export const errorResponse = z.object({
  error: z.object({
    code: z.string().describe('stable: what a client switches on'),
    message: z.string(),
    details: z.unknown(),
  }),
});

export const runSummary = z.object({
  runId: z.string(),
  graph: z.string(),
  graphHash: z.string(),
  status: z.enum(storedStatuses),
  seq: z.number().int(),
  createdAt: at('when it was created'),
  updatedAt: at('when it last changed'),
  labels: z.record(z.string(), z.string()),
});

export const runPage = z.object({
  runs: z.array(runSummary),
  next: z.string().nullable().describe('the cursor of the next page; null on the last'),
});

export const graphList = z.object({
  graphs: z.array(
    z.object({
      name: z.string(),
      hash: z.string(),
      version: z.number(),
      mermaid: z.string().describe('the declared graph as a Mermaid flowchart'),
    }),
  ),
});

export const moved = z.object({
  runId: z.string(),
  status: z.enum(storedStatuses).optional().describe('its status once its first step was recorded'),
});

export const runView = z.object({
  run: runSummary,
  status: z.string(),
  state: jsonObject,
  pending: z.array(z.string()).describe('activations scheduled and not yet completed'),
  path: z.array(z.string()).describe('the nodes the run went through, in order'),
  error: z.unknown().optional(),
  queued: queuedRun.optional(),
});

export const traceResponse = z.object({
  entries: z.array(
    z.object({
      node: z.string(),
      activation: z.string(),
      parent: z.string().nullable(),
      attempt: z.number().int(),
      startedAt: at('when the attempt started'),
      durationMs: z.number(),
      status: z.enum(['succeeded', 'failed', 'cancelled']),
      retried: z.boolean(),
      reused: z.literal(true).optional(),
      usage: z.unknown().optional(),
      turns: z.array(z.unknown()).optional(),
      heartbeat: z
        .object({ at: at('when the attempt last heartbeat'), details: z.unknown().optional() })
        .optional()
        .describe("the attempt's last ctx.heartbeat()"),
      error: z.unknown().optional(),
    }),
  ),
  path: z.array(z.string()),
});

export const stepResponse = z.object({
  seq: z.number().int(),
  at: at('when the step was committed'),
  event: z.string().describe('the event the step recorded ("created" for the input)'),
  activation: z.string().optional(),
  status: z.string().describe("the run's status after the step"),
  state: jsonObject.describe('the state after the step'),
});

export const historyPage = z.object({
  steps: z.array(stepResponse),
  next: z.number().int().nullable(),
});

export const waitList = z.object({
  waits: z.array(
    z.object({
      requestId: z.string(),
      node: z.string(),
      activation: z.string(),
      request: z.unknown().describe('what is asked: prompt, answer schema'),
      openedAt: at('when it opened'),
      answer: z.unknown(),
      answeredBy: z.string().nullable(),
      answeredAt: at('when it was answered').nullable(),
      closedAt: at('when it closed').nullable(),
    }),
  ),
});

export const stopped = z.object({ runId: z.string(), status: z.string() });

export const graphDeclaration = z.object({
  name: z.string(),
  hash: z.string(),
  version: z.number(),
  def: z.unknown().describe("the graph's declaration as data: nodes, edges, routes, fan-outs"),
});

export const graphCost = z.object({
  notes: z
    .record(z.string(), z.string())
    .describe("each node's worst case, and what earlier runs spent there (docs/cost.md)"),
  worst: z.array(z.string()).describe("the nodes of the worst case's path, its last one last"),
  total: z.string().describe('the most one run can spend, in one line'),
  unbounded: z
    .array(z.object({ node: z.string(), what: z.string(), reason: z.string() }))
    .describe('what the bound cannot count, and why'),
  runs: z.number().describe('earlier runs of the same graph hash the expected spend is read from'),
});

export const recordedEvents = z.object({
  events: z.array(z.unknown()).describe('the stream events recorded so far, in order'),
  last: z.string().nullable().describe('the offset to follow the SSE stream after'),
});

export const effectList = z.object({
  effects: z.array(
    z.object({
      key: z.string().describe('the idempotency key: runId/activation/name'),
      result: z.unknown().describe('what the effect returned, as recorded'),
      at: at('when it was recorded'),
    }),
  ),
});

const cost = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  costUsd: z.number(),
});

export const plan = z.object({
  runId: z.string(),
  kind: z.enum(['resume', 'rewind']),
  readBack: z
    .array(z.object({ node: z.string(), activation: z.string() }))
    .describe('completed activations whose recorded outputs stand'),
  runAgain: z
    .array(
      z.object({
        node: z.string(),
        activation: z.string(),
        cost: cost,
        basis: z
          .enum(['recorded', 'expected', 'none'])
          .describe("the price's source: this activation's spend, the node's median, nothing"),
      }),
    )
    .describe('activations that run again, in order, each with its price'),
  rePays: cost.describe('what the resume or rewind re-pays'),
  waitsAt: z
    .string()
    .optional()
    .describe('the plan stops at this wait: what follows depends on it'),
});

export const quarantineList = z.object({
  quarantine: z.array(z.unknown()).describe('outputs the checks set aside, with their reasons'),
});

export const patched = z.object({ runId: z.string(), status: z.string(), state: jsonObject });

export const streamEvent = z
  .object({
    offset: z.string().describe('seq.i: resume after it (the SSE event id)'),
    runId: z.string(),
    seq: z.number().int(),
    at: at('when its commit was made'),
    type: z.enum(streamEventTypes),
  })
  .loose()
  .describe('one event of the stream; docs/streaming.md lists each type and its fields');

// The memory kept across runs (docs/memory.md). A namespace in a path is its parts joined by
// periods (`users.u1`), which no part holds; each part and the key percent-encoded.

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

export const memoryItem = z.object({
  namespace: z.array(z.string()),
  key: z.string(),
  value: z.unknown().describe('any JSON'),
  createdAt: at('when the item was first put'),
  updatedAt: at('when it was last put'),
  expiresAt: at('when it stops being returned').nullable(),
});

export const memoryItemResponse = z.object({
  item: memoryItem.nullable().describe('null: there is no such item, or it expired'),
});

export const memoryPutBody = z.strictObject({
  value: z.unknown().describe('any JSON'),
  ttlMs: z.number().positive().optional().describe('expires this long after the put'),
});

export const memorySearchBody = z.strictObject({
  prefix: z
    .array(z.string())
    .default([])
    .describe('namespace prefix, in whole parts; [] (the default): every item'),
  filter: z
    .record(z.string(), scalar)
    .optional()
    .describe('top-level fields of the value, each equal to the scalar'),
  limit: z.number().int().min(0).max(1000).optional().describe('at most this many (default 10)'),
  offset: z.number().int().min(0).optional().describe('after skipping this many (default 0)'),
});

export const memorySearchResponse = z.object({ items: z.array(memoryItem) });

export const memoryNamespacesBody = z.strictObject({
  prefix: z
    .array(z.string())
    .optional()
    .describe("namespaces that start with these parts ('*': any part)"),
  suffix: z
    .array(z.string())
    .optional()
    .describe("namespaces that end with these parts ('*': any part)"),
  maxDepth: z.number().int().min(1).optional().describe('each namespace cut to this many parts'),
  limit: z.number().int().min(0).max(1000).optional().describe('at most this many (default 100)'),
  offset: z.number().int().min(0).optional().describe('after skipping this many (default 0)'),
});

export const memoryNamespaces = z.object({ namespaces: z.array(z.array(z.string())) });

export const memoryDeleted = z.object({
  deleted: z.boolean().describe('whether there was such an item'),
});

export const signalWire = z.object({
  id: z.string(),
  graph: z.string(),
  runId: z.string().nullable().describe('the run it was sent to; null for a { graph, key } signal'),
  key: z.string().nullable(),
  name: z.string(),
  payload: z.unknown(),
  sentAt: at('when it was sent'),
  expiresAt: at('when it expires unconsumed'),
  consumedRun: z.string().nullable().describe('the run that took it'),
  consumedAt: at('when it was taken').nullable(),
});

export const runSignalBody = z.strictObject({
  payload: z.unknown().describe("the payload, valid against the event node's schema"),
  id: nonEmpty('the signal id: a second signal with it is a no-op (default: a new one)').optional(),
});

export const graphSignalBody = runSignalBody.extend({
  key: nonEmpty('which run of the graph: the one whose event waits under this key'),
});

export const signalSent = z.object({
  outcome: z.enum(['delivered', 'kept', 'duplicate']),
  signal: signalWire,
  status: z.enum(storedStatuses).optional().describe("the run's status once delivered"),
});

export const signalsQuery = z.strictObject({
  state: z.enum(['kept', 'consumed', 'expired']).optional().describe('only signals in this state'),
});

export const signalList = z.object({ signals: z.array(signalWire) });

export const deleteQuery = z.strictObject({
  force: z
    .enum(['true', 'false'])
    .optional()
    .describe('true: delete a waiting run too, with what it waits for (default false)'),
});

export const deletedRuns = z.object({
  runs: z
    .array(
      z.object({
        runId: z.string(),
        graph: z.string(),
        status: z.enum(storedStatuses).describe('the status it had when it was deleted'),
        createdAt: at('when it was created'),
      }),
    )
    .describe('the runs deleted, each with all it owned, newest first'),
});
