import { msOf } from './format.js';
import type { ErrorValue, Heartbeat, StreamEvent, TraceEntry, Usage } from './types.js';

/** One attempt of an activation, from the trace (timing, usage, error) and the stream (backoff). */
export interface AttemptView {
  readonly attempt: number;
  startedAt?: number;
  durationMs?: number;
  status: 'scheduled' | 'succeeded' | 'failed' | 'cancelled';
  /** A retry that waited out its backoff until then (ms since the epoch). */
  notBefore?: number;
  error?: TraceEntry['error'] | ErrorValue;
  usage?: Usage;
  /** Its last heartbeat: told live while it runs, from its trace entry once it ended. */
  heartbeat?: Heartbeat;
}

/** One activation of one node, as the page shows it. */
export interface ActivationView {
  readonly id: string;
  readonly node: string;
  parent: string | null;
  /** A fan-out copy: which fan-out, and its branch or item index. */
  branch?: { readonly fanOut: string; readonly index: number };
  status: 'scheduled' | 'succeeded' | 'failed' | 'cancelled' | 'waiting' | 'paused';
  readonly attempts: AttemptView[];
  /** The commit that scheduled it (the state it saw is the one after it) and the one that ended it. */
  scheduledSeq: number;
  endedSeq?: number;
  update?: unknown;
  reused?: boolean;
  /** The open wait's request id, when it waits for a person. */
  requestId?: string;
  /** When it wakes (ms since the epoch), while it sleeps: a sleep node, a node's notBefore. */
  sleepsUntil?: number;
  /** While it sleeps because its rate limit had no room: the resource. */
  rateLimited?: string;
  /** What it told with `ctx.emit`. */
  readonly emitted: { readonly name: string; readonly data: unknown }[];
}

/** Everything the run page draws, built from the run's stream and its trace. */
export interface RunModel {
  /** In the order they were scheduled. */
  readonly activations: ActivationView[];
  readonly byId: Map<string, ActivationView>;
  status?: string;
  lastOffset?: string;
  /** The activation the latest commit ended: what scheduled the activations that commit tells of. */
  endedAt?: { readonly seq: number; readonly activation: string };
}

export function emptyModel(): RunModel {
  return { activations: [], byId: new Map() };
}

/** Folds one stream event into the model (in place: a 10,000-step run is many events). */
export function applyEvent(model: RunModel, e: StreamEvent): void {
  model.lastOffset = e.offset;
  const id = e.activation;
  switch (e.type) {
    case 'run':
      if (e.status !== undefined) model.status = e.status;
      return;
    case 'activation.scheduled': {
      let a = model.byId.get(id!);
      if (a === undefined) {
        a = {
          id: id!,
          node: e.node!,
          parent: parentOf(model, e),
          status: 'scheduled',
          attempts: [],
          scheduledSeq: e.seq,
          emitted: [],
          ...(e.branch !== undefined && { branch: e.branch }),
        };
        model.byId.set(a.id, a);
        model.activations.push(a);
      }
      if (e.sleeping === true && e.notBefore !== undefined) {
        // Asleep: the run waits for its time; no attempt of it has been scheduled yet.
        a.status = 'waiting';
        a.sleepsUntil = msOf(e.notBefore);
        if (e.rateLimited !== undefined) a.rateLimited = e.rateLimited;
        else delete a.rateLimited;
        return;
      }
      a.status = 'scheduled';
      delete a.sleepsUntil;
      delete a.rateLimited;
      const attempt: AttemptView = { attempt: e.attempt ?? 1, status: 'scheduled' };
      if (e.notBefore !== undefined) attempt.notBefore = msOf(e.notBefore);
      attemptOf(a, attempt.attempt, attempt);
      return;
    }
    case 'activation.completed': {
      const a = model.byId.get(id!);
      if (a === undefined) return;
      a.status = 'succeeded';
      delete a.sleepsUntil;
      a.endedSeq = e.seq;
      model.endedAt = { seq: e.seq, activation: a.id };
      a.update = e.update;
      if (e.reused) a.reused = true;
      attemptOf(a, e.attempt ?? 1).status = 'succeeded';
      return;
    }
    case 'activation.failed': {
      const a = model.byId.get(id!);
      if (a === undefined) return;
      const at = attemptOf(a, e.attempt ?? 1);
      at.status = 'failed';
      if (e.error !== undefined) at.error = e.error;
      if (!e.retrying) {
        a.status = 'failed';
        a.endedSeq = e.seq;
      }
      return;
    }
    case 'activation.paused': {
      const a = model.byId.get(id!);
      if (a !== undefined) a.status = 'paused';
      return;
    }
    case 'activation.cancelled':
      for (const c of e.activations ?? []) {
        const a = model.byId.get(c);
        if (a !== undefined && a.status !== 'succeeded' && a.status !== 'failed')
          a.status = 'cancelled';
      }
      return;
    case 'wait.opened': {
      // A person node's activation opens its wait in the commit that scheduled it, with no
      // `activation.scheduled` of its own: it comes after the activation that commit ended.
      let a = model.byId.get(id!);
      if (a === undefined) {
        a = {
          id: id!,
          node: e.node!,
          parent: model.endedAt?.seq === e.seq ? model.endedAt.activation : null,
          status: 'waiting',
          attempts: [{ attempt: 1, status: 'scheduled' }],
          scheduledSeq: e.seq,
          emitted: [],
        };
        model.byId.set(a.id, a);
        model.activations.push(a);
      }
      a.status = 'waiting';
      if (e.requestId !== undefined) a.requestId = e.requestId;
      return;
    }
    case 'wait.answered': {
      const a = model.byId.get(id!);
      if (a !== undefined && a.status === 'waiting') a.status = 'scheduled';
      return;
    }
    case 'custom': {
      model.byId.get(id!)?.emitted.push({ name: e.name ?? '', data: e.data });
      return;
    }
    case 'heartbeat': {
      const a = model.byId.get(id!);
      if (a === undefined) return;
      attemptOf(a, e.attempt ?? 1).heartbeat = {
        at: e.at,
        ...(e.details !== undefined && { details: e.details }),
      };
      return;
    }
    default:
      return;
  }
}

/**
 * The activation that scheduled this one. A subgraph's entry and exit run inline, in the step
 * that reaches them, and are never scheduled themselves: an activation they scheduled came, in
 * that same commit, from the activation the commit ended.
 */
function parentOf(model: RunModel, e: StreamEvent): string | null {
  const parent = e.parent ?? null;
  if (parent === null || model.byId.has(parent)) return parent;
  return model.endedAt?.seq === e.seq ? model.endedAt.activation : parent;
}

/** Adds the trace's timings, usage and stacks to the attempts the stream told of. */
export function applyTrace(model: RunModel, entries: readonly TraceEntry[]): void {
  for (const t of entries) {
    const a = model.byId.get(t.activation);
    if (a === undefined) continue;
    const at = attemptOf(a, t.attempt);
    at.startedAt = msOf(t.startedAt);
    at.durationMs = t.durationMs;
    at.status = t.status;
    if (t.error !== undefined) at.error = t.error;
    if (t.usage !== undefined) at.usage = t.usage;
    if (t.heartbeat !== undefined) at.heartbeat = t.heartbeat;
    if (t.reused) a.reused = true;
  }
}

function attemptOf(a: ActivationView, n: number, fresh?: AttemptView): AttemptView {
  const found = a.attempts.find((x) => x.attempt === n);
  if (found !== undefined) {
    if (fresh?.notBefore !== undefined) found.notBefore = fresh.notBefore;
    return found;
  }
  const made = fresh ?? { attempt: n, status: 'scheduled' };
  a.attempts.push(made);
  a.attempts.sort((x, y) => x.attempt - y.attempt);
  return made;
}

/** How an activation is named on the page: its node, and its branch or item when a fan-out copy. */
export function activationLabel(a: ActivationView): string {
  return a.branch === undefined ? a.node : `${a.node} [${a.branch.index}]`;
}

/** Tokens and cost over an activation's attempts. */
export function usageOf(a: ActivationView): { tokens: number; costUsd: number } {
  let tokens = 0;
  let costUsd = 0;
  for (const at of a.attempts) {
    const u = at.usage;
    if (u === undefined) continue;
    tokens += u.totalTokens ?? (u.inputTokens ?? 0) + (u.outputTokens ?? 0);
    costUsd += u.costUsd ?? 0;
  }
  return { tokens, costUsd };
}

/** The time an activation's retries waited out their backoff, in ms. */
export function backoffOf(a: ActivationView): number {
  let total = 0;
  for (let i = 1; i < a.attempts.length; i++) {
    const prev = a.attempts[i - 1]!;
    const next = a.attempts[i]!;
    if (
      prev.startedAt !== undefined &&
      prev.durationMs !== undefined &&
      next.startedAt !== undefined
    )
      total += Math.max(0, next.startedAt - (prev.startedAt + prev.durationMs));
  }
  return total;
}
