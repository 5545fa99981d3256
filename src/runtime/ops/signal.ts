import { z } from 'zod';
import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import {
  keepsSignals,
  type SignalFilter,
  type SignalRecord,
  type SignalSent,
  type SignalStore,
} from '../../store/signal-store.js';
import type { Store } from '../../store/store.js';
import { type Clock, newRunId, systemClock } from '../clock.js';
import type { WaitRequest } from '../engine/waits.js';
import { schemaMismatch } from './schema-mismatch.js';

/** How long a signal no event wait took is kept before it expires: 7 days. */
export const defaultSignalTtlMs = 7 * 24 * 60 * 60 * 1000;

/** Whom a signal is for: a run, by id, or whichever run of a graph waits under a key. */
export type SignalTarget =
  | string
  | { readonly graph: CompiledGraph<never, never> | CompiledGraph | string; readonly key: string };

/** Options of {@link signal}. */
export interface SignalOptions {
  /** The signal's id: a second signal with it is a no-op. Default: a fresh one. */
  readonly id?: string;
  /**
   * The run's graph, for a signal sent to a run id: the payload is then checked by the event
   * node's own zod schema, and a signal sent before the run reaches the node is kept. Without
   * it, only an open wait's stored JSON Schema can check it.
   */
  readonly graph?: CompiledGraph<never, never> | CompiledGraph;
  /** Kept unconsumed this long, it expires. Default {@link defaultSignalTtlMs}. */
  readonly ttlMs?: number;
  readonly clock?: Clock;
}

/**
 * Sends a signal to an event node (`event({ name, schema })`): to a run, or to the run of a
 * graph waiting under a key. The payload is checked by the node's schema; then the signal is
 * delivered to the open wait it matches, in one store transaction with the run's wake-up, or
 * kept until the run reaches the node (and expires after `ttlMs` if it never does). Like
 * `answer()`, it does not move the run: a worker continues it, or `resume()` in process.
 * @throws WaymarkError `SIGNAL_UNKNOWN` (no such run, or its graph has no event node of that
 *   name), `SIGNAL_INVALID` (the payload does not match: `details` lists the issues),
 *   `RUN_NOT_RESUMABLE` (the run succeeded or was cancelled); each records nothing.
 *
 * @example
 * await signal(store, { graph: orders, key: 'o-7' }, 'payment', { paidCents: 1200 }, { id: 'evt_123' });
 * await signal(store, runId, 'payment', { paidCents: 1200 }, { graph: orders });
 */
export async function signal(
  store: Store,
  target: SignalTarget,
  name: string,
  payload: unknown,
  options: SignalOptions = {},
): Promise<SignalSent> {
  const signals = signalStoreOf(store);
  const clock = options.clock ?? systemClock;
  const now = clock.now();
  const ttlMs = options.ttlMs ?? defaultSignalTtlMs;
  if (!(Number.isInteger(ttlMs) && ttlMs > 0)) {
    throw new WaymarkError('OPTIONS_INVALID', `signal ttlMs = ${ttlMs}: a whole number of ms > 0`, {
      retryable: false,
    });
  }
  const aim = await aimOf(store, target, options);
  if (aim.ended !== undefined) {
    // A webhook's retry of a signal the run took before it ended is a no-op, not an error.
    const standing =
      options.id === undefined ? undefined : await signalOf(signals, aim, options.id);
    if (standing !== undefined) return { outcome: 'duplicate', signal: standing };
    throw new WaymarkError(
      'RUN_NOT_RESUMABLE',
      `run "${aim.runId}" ${aim.ended}: no event node of it will take a signal now`,
      { retryable: false, details: { runId: aim.runId, status: aim.ended } },
    );
  }
  const schema = await schemaOf(store, aim, name);
  const parsed = schema.safeParse(payload);
  if (!parsed.success) {
    throw schemaMismatch(
      'SIGNAL_INVALID',
      `the payload of signal "${name}" does not match its event's schema`,
      parsed.error,
    );
  }
  const record: SignalRecord = {
    id: options.id ?? newRunId(),
    graph: aim.graphName,
    runId: aim.runId,
    key: aim.key,
    name,
    payload: JSON.stringify(parsed.data ?? null),
    sentAt: now,
    expiresAt: now + ttlMs,
    consumedRun: null,
    consumedWait: null,
    consumedAt: null,
  };
  const sent = await signals.sendSignal(record);
  if (sent.outcome === 'delivered') return sent;
  // A retry of a signal still kept (its run's host died before it asked for it) is a chance to
  // deliver it: the first one, never this payload.
  if (
    sent.outcome === 'duplicate' &&
    (sent.signal.consumedAt !== null || sent.signal.expiresAt <= now)
  )
    return sent;
  // A wait that opened while this signal was on its way registered before the signal landed,
  // or looks again after: one of the two finds the other (PostgreSQL runs both concurrently).
  const late =
    (await signals.redeliverSignal(sent.signal.id, now)) ??
    (aim.runId === null ? undefined : await toOpenWait(store, signals, aim, name, now));
  if (late === undefined) return sent;
  return { outcome: 'delivered', signal: late };
}

/**
 * A run's open event wait of this name that its host never registered (killed between the
 * commit that opened it and its ask for kept signals) is registered now, and takes the signal.
 */
async function toOpenWait(
  store: Store,
  signals: SignalStore,
  aim: Aim,
  name: string,
  now: number,
): Promise<SignalRecord | undefined> {
  for (const wait of await store.listWaits(aim.runId!, { open: true })) {
    const event = (JSON.parse(wait.request) as WaitRequest).event;
    if (event?.name !== name) continue;
    const open = { runId: wait.runId, requestId: wait.requestId, graph: aim.graphName, name };
    return signals.matchSignal({ ...open, key: event.key ?? null }, now);
  }
  return undefined;
}

/**
 * Signals kept, consumed or expired, oldest first.
 *
 * @example
 * const unmatched = await listSignals(store, { state: 'kept' });
 */
export function listSignals(store: Store, filter: SignalFilter = {}): Promise<SignalRecord[]> {
  return signalStoreOf(store).listSignals(filter);
}

/**
 * Deletes the signals that expired unconsumed; resolves with how many.
 *
 * @example
 * await expireSignals(store);
 */
export function expireSignals(store: Store, options: { readonly clock?: Clock } = {}) {
  return signalStoreOf(store).expireSignals((options.clock ?? systemClock).now());
}

interface Aim {
  readonly graphName: string;
  readonly graph: CompiledGraph | undefined;
  readonly runId: string | null;
  readonly key: string | null;
  /** The run succeeded or was cancelled: nothing will take a signal. */
  readonly ended?: 'succeeded' | 'cancelled';
}

async function signalOf(signals: SignalStore, aim: Aim, id: string) {
  const sent = await signals.listSignals({ runId: aim.runId!, graph: aim.graphName });
  return sent.find((s) => s.id === id);
}

async function aimOf(store: Store, target: SignalTarget, options: SignalOptions): Promise<Aim> {
  if (typeof target !== 'string') {
    const graph = typeof target.graph === 'string' ? options.graph : target.graph;
    const graphName = typeof target.graph === 'string' ? target.graph : target.graph.name;
    if (typeof target.key !== 'string' || target.key === '') {
      throw unknown(`a { graph, key } signal needs a non-empty key`);
    }
    return { graphName, graph: graph as CompiledGraph | undefined, runId: null, key: target.key };
  }
  const run = await store.getRun(target);
  if (run === undefined) throw unknown(`there is no run "${target}"`);
  const ended = run.status === 'succeeded' || run.status === 'cancelled' ? run.status : undefined;
  return {
    ...(ended !== undefined && { ended }),
    graphName: run.graph,
    graph: options.graph as CompiledGraph | undefined,
    runId: target,
    key: null,
  };
}

/** The event's schema: the graph's own node's, or the JSON Schema an open wait stored. */
async function schemaOf(store: Store, aim: Aim, name: string): Promise<z.ZodType> {
  if (aim.graph !== undefined) {
    for (const node of aim.graph.nodes.values())
      if (node.wait?.event?.name === name) return node.wait.answer;
    throw unknown(`graph "${aim.graphName}" has no event node named "${name}"`);
  }
  if (aim.runId !== null) {
    for (const wait of await store.listWaits(aim.runId, { open: true })) {
      const request = JSON.parse(wait.request) as WaitRequest;
      if (request.event?.name !== name) continue;
      if (request.schema === null) break;
      return z.fromJSONSchema(request.schema as Parameters<typeof z.fromJSONSchema>[0]);
    }
  }
  throw unknown(
    `no open wait of ${aim.runId === null ? `graph "${aim.graphName}"` : `run "${aim.runId}"`} takes signal "${name}"; pass the graph to check it and keep it for later`,
  );
}

function signalStoreOf(store: Store): SignalStore {
  if (keepsSignals(store)) return store;
  throw new WaymarkError('OPTIONS_INVALID', 'this store keeps no signals (no SignalStore)', {
    retryable: false,
  });
}

function unknown(message: string): WaymarkError {
  return new WaymarkError('SIGNAL_UNKNOWN', message, { retryable: false });
}
