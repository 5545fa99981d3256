import { isRecord, storeCorrupt, storedJson } from '../../error/store-corrupt.js';
import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import type { Attempt } from '../attempt/execute.js';
import { mergeFields } from '../core/apply-update.js';
import { deepFreeze } from '../core/freeze.js';
import type { Branch, FanOut, RunEvent, Snapshot } from '../core/snapshot.js';
import type { TraceEntry } from '../watch/trace.js';
import { checkpointShape } from './snapshot-shape.js';
import { parse as parseValue, stringify } from './values.js';

// The typed side of persistence: stores hold these JSON strings and never look inside.

// A record over every event type, so the compiler fails here when an event type is added and
// not listed (an unlisted type made stored answers read as corrupt).
const knownEventTypes: Record<RunEvent['type'], true> = {
  started: true,
  completed: true,
  failed: true,
  cancelled: true,
  deadline: true,
  resumed: true,
  migrated: true,
  answered: true,
  patched: true,
  moved: true,
  slept: true,
};
const eventTypes = new Set(Object.keys(knownEventTypes));

/**
 * A snapshot as stored. A branch's state is left out: it is the state at the fan-out (the run's
 * state, which does not change while the fan-out is open) plus the branch's own updates, so it
 * is recomputed on load instead of being written once per branch. Values JSON cannot hold
 * (a Date) are tagged when the graph's state can hold them (values.ts).
 */
export function encodeSnapshot(
  snapshot: Snapshot,
  graph: CompiledGraph,
  traceparent?: string,
): string {
  const fanOuts: Record<string, unknown> = {};
  for (const [id, fanOut] of Object.entries(snapshot.fanOuts)) {
    fanOuts[id] = {
      ...fanOut,
      branches: fanOut.branches.map(({ state: _state, ...rest }) => rest),
    };
  }
  // The trace context of the segment that wrote it goes first, where a resume reads it without
  // parsing the snapshot (trace-context.ts); it is not part of the checkpoint.
  if (traceparent !== undefined) return stringify({ traceparent, ...snapshot, fanOuts }, graph);
  return stringify({ ...snapshot, fanOuts }, graph);
}

/**
 * Reads a stored snapshot back, checking its shape.
 * @throws WaymarkError `STORE_CORRUPT` naming the run when the text is not a snapshot.
 */
export function decodeSnapshot(graph: CompiledGraph, text: string, runId: string): Snapshot {
  const value = checkpointShape(storedJson(text, runId, 'its snapshot', parseValue), runId);
  if (value.traceparent !== undefined) delete value.traceparent;
  const state = deepFreeze(value.state) as Snapshot['state'];
  const stored = value.fanOuts as Record<string, FanOut>;
  const fanOuts: Record<string, FanOut> = {};
  // A fan-out opened inside a branch starts from that branch's state: its parent first.
  const load = (id: string): FanOut => {
    const done = fanOuts[id];
    if (done !== undefined) return done;
    const fanOut = stored[id]!;
    const { parent } = fanOut;
    const base =
      parent === undefined || stored[parent.fanOut] === undefined
        ? state
        : load(parent.fanOut).branches[parent.index]!.state;
    const branches = fanOut.branches.map((b): Branch => {
      let branchState = base;
      for (const fields of b.updates) {
        const merged = mergeFields(graph, branchState, deepFreeze(fields));
        // The live run merged these same fields; a reducer that throws now was changed since.
        if (!merged.ok)
          throw new WaymarkError(
            'REDUCER_FAILED',
            `run "${runId}" cannot be loaded: ${merged.message}`,
            { retryable: false, details: { runId, ...(merged.details as object) } },
          );
        branchState = merged.state;
      }
      return { ...b, state: branchState };
    });
    fanOuts[id] = { ...fanOut, branches };
    return fanOuts[id]!;
  };
  for (const id of Object.keys(stored)) load(id);
  const quarantine = deepFreeze(value.quarantine) as Snapshot['quarantine'];
  return { ...(value as unknown as Snapshot), state, fanOuts, quarantine };
}

/** An event as stored: its update's values tagged when the graph's state needs it. */
export function encodeEvent(event: RunEvent, graph: CompiledGraph): string {
  return stringify(event, graph);
}

/**
 * Reads a stored event back. A completion stored before store format 3 carries the node's raw
 * return and no attempt: it is marked `unparsed`, and the transition parses it as it did then.
 *
 * @throws WaymarkError `STORE_CORRUPT` when the text is not a run event.
 */
export function decodeEvent(text: string, runId: string, seq: number): RunEvent {
  const value = storedJson(text, runId, `its event ${seq}`, parseValue) as {
    type?: unknown;
    attempt?: unknown;
  };
  if (typeof value !== 'object' || value === null || !eventTypes.has(value.type as string)) {
    throw storeCorrupt(runId, `its event ${seq} is not a run event`);
  }
  if (value.type === 'completed' && value.attempt === undefined)
    return { ...(value as RunEvent), unparsed: true } as RunEvent;
  return value as RunEvent;
}

/**
 * An attempt's result as a worker stored it in its run's inbox, read back.
 * @throws WaymarkError `STORE_CORRUPT` naming the run and the inbox item when it is not one.
 */
export function decodeAttempt(text: string, runId: string, inboxId: number): Attempt {
  const value = storedJson(
    text,
    runId,
    `its inbox item ${inboxId}`,
    parseValue,
  ) as Partial<Attempt> | null;
  const event = value?.event as { type?: unknown; activation?: unknown } | undefined;
  const ok =
    typeof value === 'object' &&
    value !== null &&
    typeof event === 'object' &&
    event !== null &&
    (event.type === 'completed' || event.type === 'failed') &&
    typeof event.activation === 'string' &&
    typeof value.startedAt === 'number' &&
    typeof value.endedAt === 'number';
  if (!ok) throw storeCorrupt(runId, `its inbox item ${inboxId} is not an attempt's result`);
  return value as Attempt;
}

// A trace entry as stored since store format 2: its fields by position, and the optional ones,
// when it has any, in one object at the end. An object per entry spent two thirds of an event
// row on field names; the shorter row is what a durable step writes (see docs/stores.md).
type StoredEntry = [
  node: string,
  activation: string,
  parent: string | null,
  attempt: number,
  startedAt: number,
  durationMs: number,
  status: TraceEntry['status'],
  retried: boolean,
  optional?: Pick<TraceEntry, 'within' | 'reused' | 'usage' | 'turns' | 'error'>,
];

const fieldCount = 8;
const entryStatuses: ReadonlySet<unknown> = new Set(['succeeded', 'failed', 'cancelled']);

/** The trace entries an event ended, as stored with it; null for none. */
export function encodeTrace(entries: readonly TraceEntry[]): string | null {
  if (entries.length === 0) return null;
  return JSON.stringify(entries.map(storedEntry));
}

function storedEntry(entry: TraceEntry): StoredEntry {
  const { node, activation, parent, attempt, startedAt, durationMs, status, retried } = entry;
  const stored: StoredEntry = [
    node,
    activation,
    parent,
    attempt,
    startedAt,
    durationMs,
    status,
    retried,
  ];
  const { within, reused, usage, turns, heartbeat, error } = entry;
  if (
    within !== undefined ||
    reused !== undefined ||
    usage !== undefined ||
    turns !== undefined ||
    heartbeat !== undefined ||
    error !== undefined
  ) {
    stored.push({
      ...(within !== undefined && { within }),
      ...(reused !== undefined && { reused }),
      ...(usage !== undefined && { usage }),
      ...(turns !== undefined && { turns }),
      ...(heartbeat !== undefined && { heartbeat }),
      // The stack and cause are the failed event's; stored once, there (loadTrace joins them).
      ...(error !== undefined && {
        error: { code: error.code, class: error.class, message: error.message },
      }),
    });
  }
  return stored;
}

/**
 * The trace entries stored with one event: arrays (store format 2), or the objects format 1
 * wrote, which a run started before may hold in its older events.
 *
 * @throws WaymarkError `STORE_CORRUPT` when the text is not a list of trace entries.
 */
export function decodeTrace(text: string | null, runId: string, seq: number): TraceEntry[] {
  if (text === null) return [];
  const value = storedJson(text, runId, `the trace of event ${seq}`);
  if (!Array.isArray(value)) throw storeCorrupt(runId, `the trace of event ${seq} is not a list`);
  return value.map((item: unknown) => {
    if (!Array.isArray(item)) {
      if (isRecord(item)) return item as unknown as TraceEntry;
      throw storeCorrupt(runId, `the trace of event ${seq} holds ${JSON.stringify(item)}`);
    }
    if (!isStoredEntry(item)) {
      throw storeCorrupt(runId, `the trace of event ${seq} holds a damaged entry`);
    }
    const [node, activation, parent, attempt, startedAt, durationMs, status, retried, optional] =
      item;
    return {
      node,
      activation,
      parent,
      attempt,
      startedAt,
      durationMs,
      status,
      retried,
      ...optional,
    };
  });
}

function isStoredEntry(item: readonly unknown[]): item is StoredEntry {
  const [node, activation, parent, attempt, startedAt, durationMs, status, retried, optional] =
    item;
  return (
    (item.length === fieldCount || (item.length === fieldCount + 1 && isRecord(optional))) &&
    typeof node === 'string' &&
    typeof activation === 'string' &&
    (parent === null || typeof parent === 'string') &&
    typeof attempt === 'number' &&
    typeof startedAt === 'number' &&
    typeof durationMs === 'number' &&
    entryStatuses.has(status) &&
    typeof retried === 'boolean'
  );
}
