import type { ErrorClass } from '../../error/codes.js';
import type { ErrorValue } from '../../error/error-value.js';
import { errorValue } from '../../error/error-value.js';
import type { RuntimeNode } from '../../graph/compiled.js';
import type { FanOutDef, JoinDef, JoinSummary } from '../../graph/types.js';
import { untrackedReset } from '../../graph/untracked.js';
import { mergeAll, refusalError } from './apply-update.js';
import { callUser, messageOf } from './call-user.js';
import type { Draft } from './draft.js';
import { scopedState } from './scope.js';
import type { Activation, Branch, BranchRef, FanOut } from './snapshot.js';

/** Branches of a map run at most this many at a time unless the map says otherwise. */
export const defaultMapConcurrency = 16;

/**
 * Opens a fan-out when `from` completes: one branch per entry (fixed) or per item (map), each
 * starting from the state as it is now: the run's, or, for a fan-out opened inside a branch of
 * another, that branch's. Its barrier counts exactly the branches it creates, and its join
 * merges them back into the scope it was opened in.
 */
export function openFanOut(
  d: Draft,
  def: FanOutDef,
  from: Activation,
  scope: readonly string[] | undefined = from.scope,
): void {
  let entries: readonly string[];
  let items: readonly unknown[] | undefined;
  const parent = from.branch;
  const base = scopeOf(d, parent);
  if (def.kind === 'fixed') {
    entries = def.branches;
  } else {
    const list = scopedState(node(d, from.node), base)[def.over];
    if (!Array.isArray(list)) {
      const message = `the map at "${def.from}" is over "${def.over}", which holds ${list === null ? 'null' : typeof list}, not a list`;
      const where = { node: from.node, activation: from.id, attempt: from.attempt };
      d.failFinally(
        node(d, from.node),
        errorValue(where, 'MAP_NOT_LIST', 'permanent', message),
        from.branch,
        scope,
      );
      return;
    }
    if (def.maxItems !== undefined && list.length > def.maxItems) {
      // The cost bound counted maxItems branches: a longer list would break its promise.
      const message = `the map at "${def.from}" is over "${def.over}", which holds ${list.length} items; it takes at most ${def.maxItems} (maxItems)`;
      const where = { node: from.node, activation: from.id, attempt: from.attempt };
      d.failFinally(
        node(d, from.node),
        errorValue(where, 'MAP_TOO_LONG', 'cap', message),
        from.branch,
        scope,
      );
      return;
    }
    items = list;
    entries = list.map(() => def.branch);
  }
  const branch: Branch = { status: 'queued', state: base, updates: [], visits: {} };
  const fanOut: FanOut = {
    id: from.id,
    from: def.from,
    join: def.join,
    ...(parent !== undefined && { parent }),
    ...(scope !== undefined && { scope }),
    entries,
    ...(items !== undefined && { items }),
    concurrency: def.concurrency ?? (def.kind === 'map' ? defaultMapConcurrency : entries.length),
    branches: entries.map(() => branch),
    started: 0,
    running: 0,
    failed: 0,
    successes: [],
  };
  d.fanOuts = { ...d.fanOuts, [fanOut.id]: fanOut };
  if (!settle(d, fanOut.id)) startQueued(d, fanOut.id);
}

/** Records that a branch reached its join, then settles the barrier if the policy allows. */
export function branchSucceeded(d: Draft, ref: BranchRef): void {
  const fanOut = edit(d, ref.fanOut);
  fanOut.branches[ref.index] = { ...fanOut.branches[ref.index]!, status: 'succeeded' };
  fanOut.running--;
  fanOut.successes.push(ref.index);
  if (!settle(d, ref.fanOut)) startQueued(d, ref.fanOut);
}

/** Records a branch that failed for good (its error is already in the run's error list). */
export function branchFailed(d: Draft, ref: BranchRef, error: ErrorValue): void {
  const fanOut = edit(d, ref.fanOut);
  fanOut.branches[ref.index] = { ...fanOut.branches[ref.index]!, status: 'failed', error };
  fanOut.running--;
  fanOut.failed++;
  if (!settle(d, ref.fanOut)) startQueued(d, ref.fanOut);
}

/**
 * A branch that failed, stopping the run at its join, runs again on resume: it counts as
 * running, not failed, until it ends again.
 */
export function reviveBranch(d: Draft, ref: BranchRef): void {
  const fanOut = edit(d, ref.fanOut);
  const { error: _error, ...branch } = fanOut.branches[ref.index]!;
  fanOut.branches[ref.index] = { ...branch, status: 'running' };
  fanOut.failed--;
  fanOut.running++;
  // The branch a nested fan-out was opened in failed with it: it runs again too.
  const up = fanOut.parent;
  if (up !== undefined && d.fanOuts[up.fanOut]?.branches[up.index]?.status === 'failed')
    reviveBranch(d, up);
}

/** Takes a join's decision again (on resume, after it could not be taken): settles or starts more. */
export function settleAgain(d: Draft, id: string): void {
  if (d.fanOuts[id] === undefined) return;
  if (!settle(d, id)) startQueued(d, id);
}

/** Replaces one branch of an open fan-out with its state, updates or visits changed. */
export function setBranch(
  d: Draft,
  ref: BranchRef,
  patch: Partial<Pick<Branch, 'state' | 'updates' | 'visits'>>,
): void {
  const fanOut = edit(d, ref.fanOut);
  const b = fanOut.branches[ref.index]!;
  // A branch this transition made is its own until the snapshot is made: changed in place, so
  // a step that schedules, applies and moves on in one branch copies it once, not each time.
  if (d.made.has(b)) {
    const own = b as MutableBranch;
    if (patch.state !== undefined) own.state = patch.state;
    if (patch.updates !== undefined) own.updates = patch.updates;
    if (patch.visits !== undefined) own.visits = patch.visits;
    return;
  }
  // Spelled out, in the fields' order: merging two spreads is a slow path in V8.
  const next: MutableBranch = {
    status: b.status,
    state: patch.state ?? b.state,
    updates: patch.updates ?? b.updates,
    visits: patch.visits ?? b.visits,
  };
  if (b.error !== undefined) next.error = b.error;
  fanOut.branches[ref.index] = next;
  d.made.add(next);
}

type MutableBranch = { -readonly [K in keyof Branch]: Branch[K] };

type Editable = { -readonly [K in keyof FanOut]: FanOut[K] } & {
  branches: Branch[];
  successes: number[];
};

/**
 * The fan-out as this transition may change it. The first edit in a transition copies it (the
 * previous snapshot stays untouched); later edits in the same transition change the copy in
 * place, so a branch event costs one copy of the branch list, not one per field it touches.
 */
function edit(d: Draft, id: string): Editable {
  if (d.editing.has(id)) return d.fanOuts[id] as Editable;
  const fanOut = d.fanOuts[id]!;
  const copy: Editable = {
    ...fanOut,
    branches: fanOut.branches.slice(),
    successes: fanOut.successes.slice(),
  };
  d.fanOuts = { ...d.fanOuts, [id]: copy };
  d.editing.add(id);
  return copy;
}

/**
 * What an activation sees: its branch's state and item, or the run's state; for a node of a
 * subgraph (`node` given), its child's state within that.
 */
export function viewOf(
  state: Readonly<Record<string, unknown>>,
  fanOuts: Readonly<Record<string, FanOut>>,
  activation: Activation,
  node?: RuntimeNode,
): {
  readonly state: Readonly<Record<string, unknown>>;
  readonly item: unknown;
  readonly index: number | undefined;
} {
  const ref = activation.branch;
  if (ref === undefined)
    return { state: scopedState(node, state), item: undefined, index: undefined };
  const fanOut = fanOuts[ref.fanOut]!;
  return {
    state: scopedState(node, fanOut.branches[ref.index]!.state),
    item: fanOut.items?.[ref.index],
    index: ref.index,
  };
}

/**
 * Whether `activation` runs inside fan-out `id`: in one of its branches, or in a branch of a
 * fan-out opened inside one of them.
 *
 * @example
 * within(d.fanOuts, activation, 'triage:1');
 */
export function within(
  fanOuts: Readonly<Record<string, FanOut>>,
  activation: Activation,
  id: string,
): boolean {
  for (let ref = activation.branch; ref !== undefined; ref = fanOuts[ref.fanOut]?.parent) {
    if (ref.fanOut === id) return true;
  }
  return false;
}

/** The state of the scope a fan-out opens in or merges back into: a branch's, or the run's. */
function scopeOf(d: Draft, ref: BranchRef | undefined): Readonly<Record<string, unknown>> {
  return ref === undefined ? d.state : d.fanOuts[ref.fanOut]!.branches[ref.index]!.state;
}

function startQueued(d: Draft, id: string): void {
  // Re-read every round: starting a branch can fail it at once (a cap) and settle the fan-out.
  for (;;) {
    const current = d.fanOuts[id];
    if (current === undefined || !d.running) return;
    if (current.running >= current.concurrency || current.started >= current.branches.length)
      return;
    const fanOut = edit(d, id);
    const index = fanOut.started++;
    fanOut.running++;
    fanOut.branches[index] = { ...fanOut.branches[index]!, status: 'running' };
    const branch = { fanOut: id, index };
    const { scope } = fanOut;
    d.enqueue(fanOut.entries[index]!, id, scope === undefined ? { branch } : { branch, scope });
  }
}

/** Applies the join policy; true when the fan-out is closed (resolved or failed). */
function settle(d: Draft, id: string): boolean {
  const fanOut = d.fanOuts[id]!;
  const join = node(d, fanOut.join);
  const def: JoinDef = join.join?.def ?? { policy: { kind: 'all' } };
  const n = fanOut.branches.length;
  // Counters, not scans: settle runs on every branch event, and a scan made a branch cost O(n).
  const { failed } = fanOut;
  const open = n - fanOut.started + fanOut.running;
  const successes = fanOut.successes.length;
  const policy = def.policy;
  const needed = policy.kind === 'quorum' ? policy.k : policy.kind === 'any' ? Math.min(1, n) : 0;
  if (failed > tolerance(def, n)) {
    failJoin(
      d,
      fanOut,
      join,
      `${failed} of ${n} branches failed, more than the ${tolerance(def, n)} tolerated`,
    );
    return true;
  }
  if (policy.kind === 'any' || policy.kind === 'quorum') {
    if (successes >= needed) {
      resolve(d, fanOut, join, fanOut.successes.slice(0, needed));
      return true;
    }
    if (successes + open < needed) {
      failJoin(
        d,
        fanOut,
        join,
        `only ${successes + open} of ${n} branches can still succeed, ${needed} needed`,
      );
      return true;
    }
    return false;
  }
  if (open > 0) return false;
  if (policy.kind === 'best') {
    const winner = bestOf(d, fanOut, join);
    if (winner === 'threw') return true;
    resolve(d, fanOut, join, winner === undefined ? [] : [winner]);
  } else {
    resolve(d, fanOut, join, fanOut.successes);
  }
  return true;
}

/**
 * Failed branches tolerated: the declared count or percentage; by default none for `all` and
 * `best` (fail fast), and for `any`/`quorum` whatever still leaves the quorum reachable.
 */
function tolerance(def: JoinDef, n: number): number {
  const { tolerate, policy } = def;
  if (typeof tolerate === 'number') return tolerate;
  if (typeof tolerate === 'string') return Math.floor((Number.parseFloat(tolerate) * n) / 100);
  if (policy.kind === 'any') return n;
  if (policy.kind === 'quorum') return n;
  return 0;
}

function bestOf(d: Draft, fanOut: FanOut, join: RuntimeNode): number | undefined | 'threw' {
  const score = join.join?.score;
  let best: number | undefined;
  let bestScore = Number.NEGATIVE_INFINITY;
  // Index order, strictly greater: the lowest index wins a tie, whatever finished first.
  for (const index of [...fanOut.successes].sort((a, b) => a - b)) {
    // Scored again on replay, where untracked fields hold their defaults.
    const untracked = d.graph.untracked;
    const branchState = fanOut.branches[index]!.state;
    const state = untracked === undefined ? branchState : untrackedReset(untracked, branchState);
    const scored =
      score === undefined ? { ok: true as const, value: 0 } : callUser(() => score(state));
    if (!scored.ok) {
      const message = messageOf(scored.thrown);
      failJoin(
        d,
        fanOut,
        join,
        `the score of join "${join.def.name}" threw on branch ${index}: ${message}`,
      );
      return 'threw';
    }
    const value = scored.value;
    if (best === undefined || value > bestScore) [best, bestScore] = [index, value];
  }
  return best;
}

/** Merges the winners' updates in branch order, cancels the rest and schedules the join. */
function resolve(d: Draft, fanOut: FanOut, join: RuntimeNode, winners: readonly number[]): void {
  const merged = [...winners].sort((a, b) => a - b);
  let updates = merged.flatMap((index) => fanOut.branches[index]!.updates);
  // A patches join merges its patch field three-way, in the join node's attempt (git is I/O):
  // the field keeps its value from before the fan-out, and the join gets each branch's patch.
  const field = join.join?.def.policy.kind === 'patches' ? join.def.workspace?.patch : undefined;
  let patches: readonly unknown[] | undefined;
  if (field !== undefined) {
    patches = merged.map((index) => fanOut.branches[index]!.state[field] ?? null);
    updates = updates.map((u) => {
      if (!Object.hasOwn(u, field)) return u;
      const { [field]: _patch, ...rest } = u;
      return rest;
    });
  }
  const parent = fanOut.parent;
  const mergedState = mergeAll(d.graph, scopeOf(d, parent), updates);
  if (!mergedState.ok) {
    // A reducer threw merging the winners: the join cannot decide until it is fixed. The
    // branches still running are left pending with the run stopped, and a resume merges again.
    const where = { node: join.def.name, activation: fanOut.id, attempt: 0 };
    d.blockJoin(fanOut, join, refusalError(where, mergedState));
    return;
  }
  const cancelled = cancelOpen(d, fanOut);
  if (parent === undefined) d.state = mergedState.state;
  else {
    // The enclosing branch keeps the merged updates as its own: its join merges them in turn.
    const outer = d.fanOuts[parent.fanOut]!.branches[parent.index]!;
    setBranch(d, parent, { state: mergedState.state, updates: [...outer.updates, ...updates] });
  }
  close(d, fanOut.id);
  const joined =
    patches === undefined
      ? summary(fanOut, merged, cancelled)
      : {
          ...summary(fanOut, merged, cancelled),
          patches: patches as NonNullable<JoinSummary['patches']>,
        };
  const { scope } = fanOut;
  d.enqueue(join.def.name, fanOut.id, {
    join: joined,
    ...(parent !== undefined && { branch: parent }),
    ...(scope !== undefined && { scope }),
  });
}

/**
 * Fails the join as an error value, without merging. Along the join node's onError route, the
 * branches still open are cancelled and the fan-out closes. With no route the run stops, and
 * the fan-out is kept as it stands: the failed branches' activations, and those still in flight,
 * stay pending, so that a resume runs only those again (the branches that succeeded are kept);
 * a join that failed with nothing left to run (a score that threw) is settled again instead.
 */
function failJoin(d: Draft, fanOut: FanOut, join: RuntimeNode, reason: string): void {
  const failures = fanOut.branches.flatMap((b, index) =>
    b.error ? [{ index, error: b.error }] : [],
  );
  const first = failures[0]?.error;
  const errorClass: ErrorClass = first?.class ?? 'permanent';
  const message = `join "${join.def.name}" failed: ${reason}${first ? `; first failure: ${first.node}: ${first.message}` : ''}`;
  const where = { node: join.def.name, activation: fanOut.id, attempt: 0 };
  if (join.def.onError === undefined) {
    const error = errorValue(where, 'JOIN_FAILED', errorClass, message, summary(fanOut, [], []));
    // What stays pending of the fan-out (failed branches, those in flight) runs again on resume.
    const retried = d.pending.some((a) => within(d.fanOuts, a, fanOut.id));
    if (retried) d.failFinally(join, error, fanOut.parent, fanOut.scope);
    else d.blockJoin(fanOut, join, error);
    return;
  }
  const cancelled = cancelOpen(d, fanOut);
  close(d, fanOut.id);
  const details = summary(fanOut, [], cancelled);
  const error = errorValue(where, 'JOIN_FAILED', errorClass, message, details);
  d.failFinally(join, error, fanOut.parent, fanOut.scope);
}

function cancelOpen(d: Draft, fanOut: FanOut): number[] {
  const cancelled: number[] = [];
  if (fanOut.branches.length - fanOut.started + fanOut.running === 0) return cancelled;
  const editable = edit(d, fanOut.id);
  editable.branches.forEach((b, index) => {
    if (b.status === 'queued' || b.status === 'running') {
      cancelled.push(index);
      editable.branches[index] = { ...b, status: 'cancelled' };
    }
  });
  editable.running = 0;
  const doomed = d.pending
    .filter((a) => a.blocked === undefined && within(d.fanOuts, a, fanOut.id))
    .map((a) => a.id);
  if (doomed.length > 0) d.abort(doomed);
  return cancelled;
}

function summary(fanOut: FanOut, merged: readonly number[], cancelled: readonly number[]) {
  return {
    merged,
    succeeded: [...fanOut.successes].sort((a, b) => a - b),
    failed: fanOut.branches.flatMap((b, index) =>
      b.status === 'failed' && b.error ? [{ index, error: b.error }] : [],
    ),
    cancelled,
  };
}

/**
 * Closes a fan-out, dropping what it kept pending for a resume (its failed branches), and the
 * fan-outs opened inside its branches, which can no longer join anything.
 */
function close(d: Draft, id: string): void {
  const before = d.fanOuts;
  if (d.pending.some((a) => a.branch !== undefined && within(before, a, id)))
    d.pending = d.pending.filter((a) => a.branch === undefined || !within(before, a, id));
  const { [id]: _closed, ...open } = before;
  // Usually none: only fan-outs opened inside this one's branches and still open (cancelled).
  const inner = Object.keys(open).filter((k) => nestedIn(before, k, id));
  d.fanOuts =
    inner.length === 0
      ? open
      : Object.fromEntries(Object.entries(open).filter(([k]) => !inner.includes(k)));
}

function nestedIn(fanOuts: Readonly<Record<string, FanOut>>, id: string, outer: string): boolean {
  for (let ref = fanOuts[id]?.parent; ref !== undefined; ref = fanOuts[ref.fanOut]?.parent) {
    if (ref.fanOut === outer) return true;
  }
  return false;
}

function node(d: Draft, name: string): RuntimeNode {
  return d.graph.nodes.get(name)!;
}
