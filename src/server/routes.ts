import type { z } from 'zod';
import * as l from './limit-schemas.js';
import * as ss from './schedule-schemas.js';
import * as s from './schemas.js';

/** One route of the API: what it takes and gives, for its handler and the OpenAPI document. */
export interface RouteSpec {
  readonly method: 'get' | 'post' | 'put' | 'delete';
  /** Hono's form: `/runs/:id`. */
  readonly path: string;
  readonly summary: string;
  readonly query?: z.ZodObject;
  readonly body?: z.ZodObject;
  /** The status of success. */
  readonly status: 200 | 202;
  /** The body of success; `event-stream` for Server-Sent Events. */
  readonly response: z.ZodType | 'event-stream';
  /** Codes this route may refuse with, beyond a bad request and a missing token. */
  readonly refuses?: readonly string[];
}

const run = ['RUN_NOT_FOUND', 'GRAPH_NOT_SERVED'];

/** Every route the API has. The document at `/openapi.json` is made from this table. */
export const routes = {
  listGraphs: {
    method: 'get',
    path: '/graphs',
    summary: 'The graphs this server runs: name, structural hash, version, Mermaid',
    status: 200,
    response: s.graphList,
  },
  listRuns: {
    method: 'get',
    path: '/runs',
    summary: 'Runs, newest first, filtered, one page at a time',
    query: s.listRunsQuery,
    status: 200,
    response: s.runPage,
  },
  startRun: {
    method: 'post',
    path: '/runs',
    summary: 'Starts a run in this server; answered once its first step is recorded',
    body: s.startRunBody,
    status: 202,
    response: s.moved,
    refuses: [
      'GRAPH_NOT_SERVED',
      'INPUT_INVALID',
      'CONTEXT_INVALID',
      'RUN_EXISTS',
      'LIMIT_KEY_INVALID',
    ],
  },
  getRun: {
    method: 'get',
    path: '/runs/:id',
    summary: 'A run: its record, status, state, pending activations and path',
    status: 200,
    response: s.runView,
    refuses: run,
  },
  getTrace: {
    method: 'get',
    path: '/runs/:id/trace',
    summary: "A run's trace: every attempt of every activation",
    status: 200,
    response: s.traceResponse,
    refuses: run,
  },
  getHistory: {
    method: 'get',
    path: '/runs/:id/history',
    summary: 'The state after every step, one page at a time',
    query: s.historyQuery,
    status: 200,
    response: s.historyPage,
    refuses: run,
  },
  getStep: {
    method: 'get',
    path: '/runs/:id/steps/:seq',
    summary: 'The state after one step',
    status: 200,
    response: s.stepResponse,
    refuses: run,
  },
  streamEvents: {
    method: 'get',
    path: '/runs/:id/events',
    summary:
      "A run's events as Server-Sent Events (each `data` is one stream event), to where the run stops (waits or ends; `until=end`: to its end); resumes after `Last-Event-ID`",
    query: s.eventsQuery,
    status: 200,
    response: 'event-stream',
    refuses: run,
  },
  listQueued: {
    method: 'get',
    path: '/queued',
    summary: "Runs queued behind their graph's concurrency limit, oldest first",
    query: l.queuedQuery,
    status: 200,
    response: l.queuedList,
  },
  listWaits: {
    method: 'get',
    path: '/runs/:id/waits',
    summary: "A run's waits for a person, open and closed",
    query: s.waitsQuery,
    status: 200,
    response: s.waitList,
    refuses: run,
  },
  answerWait: {
    method: 'post',
    path: '/runs/:id/waits/:request/answer',
    summary: 'Answers a wait (validated against its schema, recorded once) and moves the run on',
    body: s.answerBody,
    status: 202,
    response: s.moved,
    refuses: [...run, 'WAIT_NOT_FOUND', 'ANSWER_INVALID', 'WAIT_ALREADY_ANSWERED', 'WAIT_CLOSED'],
  },
  signalRun: {
    method: 'post',
    path: '/runs/:id/signals/:name',
    summary:
      "Sends a signal to a run's event node (payload validated, delivered once by id): delivered to its open wait and the run moved on, or kept until the run reaches the event",
    body: s.runSignalBody,
    status: 202,
    response: s.signalSent,
    refuses: [...run, 'SIGNAL_INVALID', 'SIGNAL_UNKNOWN', 'RUN_NOT_RESUMABLE'],
  },
  signalGraph: {
    method: 'post',
    path: '/graphs/:graph/signals/:name',
    summary:
      'Sends a signal to the run of a graph whose event waits under `key`, or keeps it until one does',
    body: s.graphSignalBody,
    status: 202,
    response: s.signalSent,
    refuses: ['GRAPH_NOT_SERVED', 'SIGNAL_INVALID', 'SIGNAL_UNKNOWN'],
  },
  listSignals: {
    method: 'get',
    path: '/signals',
    summary:
      'Signals kept for runs that have not reached their event, taken, or expired; oldest first',
    query: s.signalsQuery,
    status: 200,
    response: s.signalList,
  },
  resumeRun: {
    method: 'post',
    path: '/runs/:id/resume',
    summary:
      'Moves a stopped run on from where it stopped (with `goto`: from that node, checked before the answer)',
    body: s.resumeBody,
    status: 202,
    response: s.moved,
    refuses: [...run, 'RUN_NOT_RESUMABLE', 'RUN_OWNED', 'RUN_QUEUED', 'GOTO_INVALID'],
  },
  cancelRun: {
    method: 'post',
    path: '/runs/:id/cancel',
    summary: 'Cancels a run that has not finished',
    body: s.cancelBody,
    status: 200,
    response: s.stopped,
    refuses: [...run, 'RUN_NOT_CANCELLABLE'],
  },
  deleteRun: {
    method: 'delete',
    path: '/runs/:id',
    summary:
      'Deletes a run and all it owns (history, waits, effects, memos, timers), in one transaction',
    query: s.deleteQuery,
    status: 200,
    response: s.deletedRuns,
    refuses: ['RUN_NOT_FOUND', 'RUN_LIVE', 'RUN_WAITING', 'RUN_REFERENCED'],
  },
  deleteThread: {
    method: 'delete',
    path: '/threads/:id',
    summary: "Deletes a thread: its first run (the thread's id) and every later run of it",
    query: s.deleteQuery,
    status: 200,
    response: s.deletedRuns,
    refuses: ['RUN_NOT_FOUND', 'RUN_LIVE', 'RUN_WAITING', 'RUN_REFERENCED'],
  },
  continueRun: {
    method: 'post',
    path: '/runs/:id/continue',
    summary: "Starts a thread's next run from a finished run's final state",
    body: s.continueBody,
    status: 202,
    response: s.moved,
    refuses: [...run, 'RUN_NOT_CONTINUABLE', 'INPUT_INVALID', 'RUN_EXISTS'],
  },
  patchRun: {
    method: 'post',
    path: '/runs/:id/patch',
    summary: 'Changes the state of a waiting or stopped run: a recorded event naming who and why',
    body: s.patchBody,
    status: 200,
    response: s.patched,
    refuses: [...run, 'RUN_NOT_PATCHABLE', 'INPUT_INVALID', 'GOTO_INVALID'],
  },
  getGraph: {
    method: 'get',
    path: '/graphs/:name',
    summary: "A graph's declaration as data, to lay it out",
    status: 200,
    response: s.graphDeclaration,
    refuses: ['GRAPH_NOT_SERVED'],
  },
  getGraphCost: {
    method: 'get',
    path: '/graphs/:name/cost',
    summary:
      "A graph's worst case per node, what earlier runs spent there and the worst path (`waymark graph --cost`)",
    status: 200,
    response: s.graphCost,
    refuses: ['GRAPH_NOT_SERVED'],
  },
  getRecorded: {
    method: 'get',
    path: '/runs/:id/recorded',
    summary: "What a run's stream has told so far, in one answer (then follow the SSE stream)",
    query: s.recordedQuery,
    status: 200,
    response: s.recordedEvents,
    refuses: [...run, 'OPTIONS_INVALID'],
  },
  getQuarantine: {
    method: 'get',
    path: '/runs/:id/quarantine',
    summary: 'The outputs the checks of a run set aside',
    status: 200,
    response: s.quarantineList,
    refuses: run,
  },
  listEffects: {
    method: 'get',
    path: '/runs/:id/effects',
    summary:
      'The effects a run recorded in its ledger, each under its idempotency key (`runId/activation/name`), in the order they were recorded',
    status: 200,
    response: s.effectList,
    refuses: run,
  },
  getPlan: {
    method: 'get',
    path: '/runs/:id/plan',
    summary:
      'What a resume (with `to`: a rewind) would read back, run again and re-pay, before anything runs (`--plan`)',
    query: s.planQuery,
    status: 200,
    response: s.plan,
    refuses: [...run, 'OPTIONS_INVALID'],
  },
  rewindRun: {
    method: 'post',
    path: '/runs/:id/rewind',
    summary:
      'A new run from the checkpoint before a node, with an optional note (`waymark rewind`); the earlier run stays',
    body: s.rewindBody,
    status: 202,
    response: s.moved,
    refuses: [...run, 'OPTIONS_INVALID', 'RUN_EXISTS'],
  },
  searchMemory: {
    method: 'post',
    path: '/memory/search',
    summary:
      'Items of the memory kept across runs under a namespace prefix, by namespace then key, filtered and paged',
    body: s.memorySearchBody,
    status: 200,
    response: s.memorySearchResponse,
    refuses: ['MEMORY_INVALID'],
  },
  listMemoryNamespaces: {
    method: 'post',
    path: '/memory/namespaces',
    summary:
      "The memory's namespaces, by prefix and suffix (`'*'`: any part), cut to a depth, paged",
    body: s.memoryNamespacesBody,
    status: 200,
    response: s.memoryNamespaces,
    refuses: ['MEMORY_INVALID'],
  },
  getMemory: {
    method: 'get',
    path: '/memory/:namespace/:key',
    summary: 'One item of the memory (`namespace`: its parts joined by periods, `users.u1`)',
    status: 200,
    response: s.memoryItemResponse,
    refuses: ['MEMORY_INVALID'],
  },
  putMemory: {
    method: 'put',
    path: '/memory/:namespace/:key',
    summary: 'Writes an item of the memory, with an optional time to live',
    body: s.memoryPutBody,
    status: 200,
    response: s.memoryItem,
    refuses: ['MEMORY_INVALID'],
  },
  deleteMemory: {
    method: 'delete',
    path: '/memory/:namespace/:key',
    summary: 'Deletes an item of the memory',
    status: 200,
    response: s.memoryDeleted,
    refuses: ['MEMORY_INVALID'],
  },
  listSchedules: {
    method: 'get',
    path: '/schedules',
    summary:
      'The schedules of the graphs this server serves, by id, with their next tick and last run',
    status: 200,
    response: ss.scheduleList,
  },
  putSchedule: {
    method: 'post',
    path: '/schedules',
    summary: 'Stores a schedule (the same one again changes nothing): each tick starts one run',
    body: ss.scheduleBody,
    status: 200,
    response: ss.schedule,
    refuses: ['SCHEDULE_INVALID', 'GRAPH_NOT_SERVED'],
  },
  getSchedule: {
    method: 'get',
    path: '/schedules/:id',
    summary: 'One schedule',
    status: 200,
    response: ss.schedule,
    refuses: ['SCHEDULE_NOT_FOUND'],
  },
  removeSchedule: {
    method: 'delete',
    path: '/schedules/:id',
    summary: 'Removes a schedule; the runs it started stay',
    status: 200,
    response: ss.scheduleRemoved,
    refuses: ['SCHEDULE_NOT_FOUND'],
  },
  pauseSchedule: {
    method: 'post',
    path: '/schedules/:id/pause',
    summary: 'Pauses a schedule: no tick starts a run until it is resumed',
    status: 200,
    response: ss.schedule,
    refuses: ['SCHEDULE_NOT_FOUND'],
  },
  resumeSchedule: {
    method: 'post',
    path: '/schedules/:id/resume',
    summary: 'Resumes a paused schedule from now; the ticks it was paused for are not caught up',
    status: 200,
    response: ss.schedule,
    refuses: ['SCHEDULE_NOT_FOUND'],
  },
  watchRuns: {
    method: 'get',
    path: '/watch/runs',
    summary:
      'The listing of runs, watched: an SSE `runs` event whenever a run among the newest, running and waiting ones changes',
    status: 200,
    response: 'event-stream',
  },
} as const satisfies Record<string, RouteSpec>;
