import type { ErrorClass, ErrorCode } from '../../error/codes.js';
import { type ErrorValue, errorValue } from '../../error/error-value.js';
import type { CompiledGraph, RuntimeNode } from '../../graph/compiled.js';
import { END } from '../../graph/end.js';
import { type SentToParent, sentToParent } from '../../graph/parent-goto.js';
import { blocked, keepBlocked, onlyWaiting, pendingIndex, where } from './activations.js';
import { answerUpdate } from './answer-update.js';
import { mergeFields, parseUpdate, refusalError } from './apply-update.js';
import { booked } from './attempt-report.js';
import { branchId } from './branch-id.js';
import { resumedLimits, snapshotOf, stampOf } from './checkpoint.js';
import type { ResumeDraft, Scheduling } from './draft.js';
import { branchFailed, branchSucceeded, openFanOut, setBranch } from './fan-out.js';
import { inlineUpdate } from './inline.js';
import { sentFromBranch } from './parent-update.js';
import { nextAttempt, retries } from './retry.js';
import { routeOf } from './route.js';
import { branchUpdates, outerScope, scheduling } from './scope.js';
import { admitStop, awakeToRun, endedSleeps, rateDeferred, startCommand } from './sleeping.js';
import type {
  Activation,
  AttemptReport,
  BranchRef,
  Command,
  FanOut,
  Outcome,
  RunEvent,
  RunLimits,
  RunStatus,
  Snapshot,
  StepResult,
} from './snapshot.js';
import { capKeyOf, withoutCaps } from './visits.js';

type State = Snapshot['state'];
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * The working copy of one transition; `step` builds one, mutates it, and freezes the result.
 * Its public members are the {@link Draft} the fan-out rules work on; only `step` (step.ts)
 * makes one, and it is not exported from the package.
 *
 * @example
 * const t = new Transition(graph, snapshot); t.complete(event); return t.result();
 */
export class Transition implements ResumeDraft {
  readonly graph: CompiledGraph;
  readonly #before: Snapshot;
  state: State;
  pending: Activation[];
  fanOuts: Record<string, FanOut>;
  readonly editing = new Set<string>();
  readonly made = new Set<object>();
  #visits: Snapshot['visits'];
  // #visits is copied on write, once per transition (a map opening admits many activations).
  #visitsOwned = false;
  #steps: number;
  #errors: Snapshot['errors'];
  #spent: Snapshot['spent'];
  #quarantine: Snapshot['quarantine'];
  #limits: RunLimits;
  #stamp: Snapshot['graph'];
  #status: RunStatus = 'running';
  #error: ErrorValue | undefined;
  #outcome: Outcome | undefined;
  pausing = false;
  readonly #commands: Command[] = [];

  constructor(graph: CompiledGraph, snapshot: Snapshot) {
    this.graph = graph;
    this.#before = snapshot;
    this.state = snapshot.state;
    this.pending = snapshot.pending.slice();
    this.fanOuts = snapshot.fanOuts;
    this.#visits = snapshot.visits;
    this.#steps = snapshot.steps;
    this.#errors = snapshot.errors;
    this.#spent = snapshot.spent;
    this.#quarantine = snapshot.quarantine;
    this.#limits = snapshot.limits;
    this.#stamp = snapshot.graph;
  }

  get running(): boolean {
    return this.#status === 'running';
  }

  /** Books what an attempt reported into the run's spend and quarantine. */
  #report(activation: Activation, report: AttemptReport, booksQuarantine: boolean): void {
    const books = { spent: this.#spent, quarantine: this.#quarantine };
    ({ spent: this.#spent, quarantine: this.#quarantine } = booked(
      books,
      activation,
      report,
      booksQuarantine,
    ));
  }

  /** Schedules a new activation of `node`, unless a cap or the step limit stops it. */
  enqueue(node: string, parent: string | null, how: Scheduling = {}): void {
    if (this.#status !== 'running') return;
    const target = this.#node(node);
    const { branch } = how;
    const id = branch === undefined ? this.#mainId(target) : branchId(this, branch, node);
    const { scope } = how;
    // Set field by field, in this order: conditional spreads into a literal are a slow path.
    const activation: Mutable<Activation> = { id, node, attempt: 1, parent };
    if (how.cause !== undefined) activation.error = how.cause;
    if (branch !== undefined) activation.branch = branch;
    if (scope !== undefined) activation.scope = scope;
    if (how.join !== undefined) activation.join = how.join;
    this.#admit(target, activation, how.cause?.code !== 'VISIT_CAP');
  }

  /**
   * Lets a new activation in, or stops it at its node's visit cap or the run's step limit. A
   * stopped activation that nothing handles is kept, blocked, so that a resume (under a graph
   * with a raised cap, say) admits it again instead of finding nothing to run.
   */
  #admit(target: RuntimeNode, activation: Activation, mayRoute: boolean): void {
    const { node, id } = activation;
    // A node moved back to (goto, asNode) is counted from then on, like one that loops.
    const counts = target.repeats || this.#visits[node] !== undefined;
    const visit = counts ? (this.#visits[node] ?? 0) + 1 : 1;
    // In a subgraph a cap counts per entry of the child, under its own key; `visit` numbers ids.
    const capKey =
      activation.scope === undefined || target.cap === Number.POSITIVE_INFINITY
        ? undefined
        : capKeyOf(activation.scope, node);
    const counted = capKey === undefined ? visit : (this.#visits[capKey] ?? 0) + 1;
    if (counted > target.cap) {
      const message = `node "${node}" reached its visit cap of ${target.cap} after ${this.#steps} steps`;
      const error = errorValue({ node, activation: id, attempt: 0 }, 'VISIT_CAP', 'cap', message, {
        cap: target.cap,
        steps: this.#steps,
      });
      // A second cap in a row is not routed again: a capped node routing errors to itself would loop.
      this.#block(target, activation, 'enqueue', error, mayRoute);
      return;
    }
    if (this.#steps >= this.#limits.maxSteps) {
      const message = `the run reached its limit of ${this.#limits.maxSteps} steps before "${node}"`;
      const error = errorValue({ node, activation: id, attempt: 0 }, 'STEP_LIMIT', 'cap', message);
      this.pending.push(blocked(activation, 'enqueue'));
      this.#finish('failed', error);
      return;
    }
    // A wait is admitted once its prompt could be asked (a sleep, its `until` read); one that
    // throws blocks it, uncounted, so a resume admits it again under the same id.
    const stops = target.wait ?? target.sleep;
    const admitted = stops === undefined ? activation : this.#asked(target, activation);
    if (admitted === undefined) return;
    // A node that runs at most once is visit 1: uncounted, the table stays as small as the loops.
    if (counts) {
      const visits = this.#ownVisits();
      visits[node] = visit;
      if (capKey !== undefined) visits[capKey] = counted;
    }
    if (admitted.waiting === undefined && this.#pauses(admitted)) {
      this.pending.push({ ...admitted, paused: true });
      return;
    }
    if (target.inline !== undefined) {
      this.#inline(target, admitted);
      return;
    }
    this.#start(admitted);
  }

  /** Whether a breakpoint stops this activation before it starts. */
  #pauses(activation: Activation): boolean {
    return this.pausing || this.#limits.pauseBefore?.includes(activation.node) === true;
  }

  complete(event: Extract<RunEvent, { type: 'completed' }>): void {
    const index = pendingIndex(this.pending, event.activation, event.attempt);
    if (index === -1) return;
    const activation = this.pending[index]!;
    if (activation.waiting !== undefined) return;
    if (activation.sleeping !== undefined) {
      this.#commands.push(...endedSleeps([activation]));
      // A node's notBefore has passed: its body starts now, under the same activation.
      const awake = awakeToRun(this.#node(activation.node), activation);
      if (awake !== undefined) {
        this.pending[index] = awake;
        this.#commands.push(startCommand(awake));
        return;
      }
    }
    if (event.usage !== undefined || event.quarantine !== undefined)
      this.#report(activation, event, true);
    let fields = event.update as State | undefined;
    // Events stored before store format 3 carry the node's raw return: parsed here, as then.
    if (event.unparsed) {
      const node = this.#node(activation.node);
      const parsed = parseUpdate(this.graph, node, event.update);
      if (!parsed.ok) {
        this.fail(activation.id, refusalError(where(activation), parsed), undefined, undefined);
        return;
      }
      fields = parsed.fields;
    }
    const sent = sentToParent(fields);
    const refused = sent && sentFromBranch(activation, this.fanOuts);
    if (refused !== undefined) this.fail(activation.id, refused, event.attempt, undefined);
    else this.#apply(index, activation, sent === undefined ? fields : sent.update, false, sent);
  }

  /** Applies a person's answer as the node's update. */
  answer(event: Extract<RunEvent, { type: 'answered' }>): void {
    const index = this.pending.findIndex((a) => a.id === event.activation);
    const activation = this.pending[index];
    if (activation?.waiting === undefined) return;
    let fields = event.update as State | undefined;
    // Answers stored before store format 3 carry no update: it is computed here, as then.
    if (!('update' in event)) {
      const made = answerUpdate(this.graph, activation, event.answer, this.state, this.fanOuts);
      if (!made.ok) {
        this.fail(activation.id, made.error, undefined, undefined);
        return;
      }
      fields = made.fields;
    }
    this.#apply(index, activation, fields);
  }

  /**
   * Applies an inline node (a subgraph's entry or exit) in this transition: its mapping's update
   * is merged like a completion's, without an attempt, a step or an outcome of its own (the
   * outcome stays the event's). A mapping that fails fails the node as a body would.
   */
  #inline(node: RuntimeNode, activation: Activation): void {
    // Leaving a child: the caps it counted are spent with it.
    if (node.inline!.capped) this.#forgetCaps(activation.scope);
    const made = inlineUpdate(this.graph, node, activation, this.state, this.fanOuts);
    if (made.ok) {
      this.#apply(-1, activation, made.fields, true);
      return;
    }
    // Pending while it fails, as a body's activation: a resume applies it again.
    this.pending.push(activation);
    this.#failFor(node, activation, made.error);
  }

  /** Drops the per-entry cap counts of the child run `scope` ends in. */
  #forgetCaps(scope: readonly string[] | undefined): void {
    const visits = withoutCaps(this.#visits, scope);
    if (visits === this.#visits) return;
    this.#visits = visits;
    this.#visitsOwned = true;
  }

  /**
   * Merges a completed activation's fields into its scope, then moves on from it. `index` is its
   * place in pending; -1 for an inline node's, which is never pending unless it fails. `sent`:
   * the node ended its subgraph with `parent()`, which goes on from the subgraph's exit.
   */
  #apply(
    index: number,
    activation: Activation,
    fields: State | undefined,
    inline = false,
    sent?: SentToParent,
  ): void {
    const node = this.#node(activation.node);
    const leaving = sent === undefined ? node : this.#node(sent.exit);
    const { branch } = activation;
    const before =
      branch === undefined ? undefined : this.fanOuts[branch.fanOut]!.branches[branch.index]!;
    const scope = before === undefined ? this.state : before.state;
    let state = scope;
    if (fields !== undefined) {
      const merged = mergeFields(this.graph, scope, fields);
      if (!merged.ok) {
        // The node did its work; its update cannot be applied: a bug in a reducer, which a
        // retry of the node would not fix. Its activation stays pending for a resume.
        const error = refusalError(where(activation), merged);
        if (!inline) this.#outcome = { activation, status: 'failed', error, retrying: false };
        if (index === -1) this.pending.push(activation);
        this.#failFor(node, activation, error);
        return;
      }
      state = merged.state;
    }
    if (before === undefined) this.state = state;
    else if (fields !== undefined) {
      setBranch(this, branch!, { state, updates: branchUpdates(leaving, before.updates, fields) });
    }
    if (index !== -1) this.pending.splice(index, 1);
    if (!inline) {
      this.#steps++;
      this.#outcome = { activation, status: 'succeeded', retrying: false };
    }
    // A breakpoint after this node: whatever its completion admits waits for a resume.
    this.pausing = this.#limits.pauseAfter?.includes(activation.node) === true;
    if (sent === undefined) this.#moveOn(node, activation, state);
    else {
      if (leaving.inline!.capped) this.#forgetCaps(activation.scope);
      this.#moveOn(leaving, { ...activation, node: sent.exit }, state, sent.goto);
    }
    this.pausing = false;
  }

  /**
   * After an activation completed: open its fan-out, or follow its route or edge. What follows
   * a subgraph's entry runs inside the child's scope; what follows its exit, outside it again.
   */
  #moveOn(node: RuntimeNode, activation: Activation, state: State, goto?: string): void {
    const scope =
      node.inline?.scope === 'enter'
        ? activation.scope === undefined
          ? [activation.id]
          : [...activation.scope, activation.id]
        : outerScope(node, activation);
    if (goto === undefined && node.fanOut !== undefined) {
      openFanOut(this, node.fanOut, activation, scope);
      return;
    }
    const next = goto ?? this.#route(node, activation, state);
    if (next === undefined || !this.running) return;
    const { branch } = activation;
    if (branch !== undefined && next === this.fanOuts[branch.fanOut]!.join) {
      branchSucceeded(this, branch);
    } else if (next !== END) {
      this.enqueue(next, activation.id, scheduling(branch, scope));
    }
  }

  fail(
    id: string,
    error: ErrorValue,
    attempt: number | undefined,
    at: number | undefined,
    report?: AttemptReport,
  ): void {
    const index = pendingIndex(this.pending, id, attempt);
    if (index === -1) return;
    const activation = this.pending[index]!;
    // A blocked activation is no attempt. A waiting one fails by its wait: a timeout, or an
    // answer its update cannot apply (left waiting, the run would wait on a closed wait for good).
    if (activation.blocked !== undefined) return;
    if (report?.usage !== undefined) this.#report(activation, report, false);
    const node = this.#node(activation.node);
    const deferred = rateDeferred(activation, error);
    if (deferred !== undefined) {
      this.pending[index] = deferred;
      return void this.#commands.push(startCommand(deferred));
    }
    if (retries(node, activation, error)) {
      const retry = nextAttempt(node, activation, error, at);
      this.pending[index] = retry;
      this.#commands.push({ type: 'execute', activation: retry });
      this.#outcome = { activation, status: 'failed', error, retrying: true };
      return;
    }
    this.#outcome = { activation, status: 'failed', error, retrying: false };
    this.#failFor(node, activation, error);
  }

  /**
   * A pending activation failed for good: its node's onError route handles it (the activation is
   * done, as a failure), or its branch fails (the join decides), or the run fails with the
   * activation still pending, so that a resume tries it again.
   */
  #failFor(node: RuntimeNode, activation: Activation, error: ErrorValue, mayRoute = true): void {
    this.recordError(error);
    if (node.def.onError !== undefined && mayRoute) {
      this.#drop(activation.id, true);
      const how = { ...scheduling(activation.branch, outerScope(node, activation)), cause: error };
      this.enqueue(node.def.onError, error.activation, how);
    } else if (activation.branch !== undefined) {
      // Kept, blocked, while its fan-out is open: if the join carries on without it, it goes when
      // the fan-out closes; if the join gives up and stops the run, a resume tries it again.
      if (activation.blocked === undefined) keepBlocked(this.pending, activation.id, 'branch');
      branchFailed(this, activation.branch, error);
    } else {
      this.#finish('failed', error);
    }
  }

  /**
   * A decision that stopped `activation` (a cap, a router, a join): its node's onError route
   * handles it, or the activation is kept blocked so a resume takes the decision again.
   */
  #block(
    node: RuntimeNode,
    activation: Activation,
    kind: 'enqueue' | 'route',
    error: ErrorValue,
    mayRoute: boolean,
  ): void {
    if (node.def.onError !== undefined && mayRoute) {
      this.recordError(error);
      const how = { ...scheduling(activation.branch, outerScope(node, activation)), cause: error };
      this.enqueue(node.def.onError, error.activation, how);
      return;
    }
    const kept = blocked(activation, kind);
    this.pending.push(kept);
    this.#failFor(node, kept, error, false);
  }

  failFinally(
    node: RuntimeNode,
    error: ErrorValue,
    branch: BranchRef | undefined,
    scope?: readonly string[],
  ): void {
    this.recordError(error);
    if (node.def.onError !== undefined) {
      this.enqueue(node.def.onError, error.activation, {
        ...scheduling(branch, scope),
        cause: error,
      });
    } else if (branch !== undefined) {
      branchFailed(this, branch, error);
    } else {
      this.#finish('failed', error);
    }
  }

  recordError(error: ErrorValue): void {
    this.#errors = [...this.#errors, error];
  }

  abort(ids: readonly string[], stop = true): void {
    const doomed = new Set(ids);
    const closed: string[] = [];
    this.#commands.push(...endedSleeps(this.pending.filter((a) => doomed.has(a.id))));
    this.pending = this.pending.filter((a) => {
      if (!doomed.has(a.id)) return true;
      if (a.waiting !== undefined) closed.push(a.waiting.requestId);
      return false;
    });
    if (stop) this.#commands.push({ type: 'abort', activations: ids });
    if (closed.length > 0) this.#commands.push({ type: 'closeWaits', requestIds: closed });
  }

  /** Stops the run with the join of a fan-out undecided: a resume settles it again. */
  blockJoin(fanOut: FanOut, join: RuntimeNode, error: ErrorValue): void {
    this.pending.push({
      id: `${fanOut.id}/${join.def.name}`,
      node: join.def.name,
      attempt: 0,
      parent: fanOut.id,
      blocked: 'settle',
    });
    this.recordError(error);
    this.#finish('failed', error);
  }

  /** Stops the run; the activations in flight stay pending so a resume can run them again. */
  stop(
    status: 'cancelled' | 'timed_out',
    code: ErrorCode,
    errorClass: ErrorClass,
    message: string,
  ): void {
    const current = this.pending[0];
    const node = current?.node ?? this.graph.entry;
    const where = { node, activation: current?.id ?? `${node}:0`, attempt: current?.attempt ?? 0 };
    this.#finish(status, errorValue(where, code, errorClass, message));
    // A cancelled run never moves again: nobody may answer its waits.
    if (status === 'cancelled') {
      const open = this.pending.flatMap((a) => (a.waiting ? [a.waiting.requestId] : []));
      if (open.length > 0) this.#commands.push({ type: 'closeWaits', requestIds: open });
      this.#commands.push(...endedSleeps(this.pending));
    }
  }

  /** What a resume changes besides its pending activations: the stamp, the deadline, the step limit. */
  ranBefore(ran: Readonly<Record<string, number>>): void {
    for (const [node, n] of Object.entries(ran))
      if ((this.#visits[node] ?? 0) < n) this.#ownVisits()[node] = n;
  }

  resumeUnder(event: Extract<RunEvent, { type: 'resumed' }>): boolean {
    this.#stamp = stampOf(this.graph);
    this.#limits = resumedLimits(this.#limits, event);
    // A failed activation starts a fresh retry budget; an interrupted one keeps its attempt.
    return this.#before.status === 'failed';
  }

  admit(activation: Activation): void {
    this.#admit(this.#node(activation.node), activation, true);
  }

  moveOn(activation: Activation): void {
    this.#moveOn(this.#node(activation.node), activation, this.#scopeState(activation));
  }

  schedule(scheduled: Activation): void {
    // A resume is what a breakpoint waits for: the paused activation runs now.
    const { paused: _paused, ...activation } = scheduled;
    const node = this.#node(activation.node);
    if (node.inline !== undefined) {
      this.#inline(node, activation);
      return;
    }
    this.#start(activation);
  }

  /** Makes `activation` pending, and tells the driver to run its body or open its wait. */
  #start(activation: Activation): void {
    this.pending.push(activation);
    this.#commands.push(startCommand(activation));
  }

  result(): StepResult {
    // Blocked entries are for a resume: a running run has them only in a fan-out that is open.
    if (this.#status === 'running' && this.pending.length === 0) this.#status = 'succeeded';
    else if (this.#status === 'running' && onlyWaiting(this.pending)) this.#status = 'waiting';
    const snapshot = snapshotOf(this.#status, this.#error, {
      runId: this.#before.runId,
      graph: this.#stamp,
      state: this.state,
      pending: this.pending,
      visits: this.#visits,
      steps: this.#steps,
      errors: this.#errors,
      fanOuts: this.fanOuts,
      limits: this.#limits,
      spent: this.#spent,
      quarantine: this.#quarantine,
    });
    const commands = this.#commands;
    const outcome = this.#outcome;
    return outcome === undefined ? { snapshot, commands } : { snapshot, commands, outcome };
  }

  /** A person's activation with its question asked (a sleep's with its time); undefined: it threw. */
  #asked(node: RuntimeNode, activation: Activation): Activation | undefined {
    const { state, fanOuts, graph } = this;
    const asked = admitStop(node, activation, this.#before.runId, state, fanOuts, graph.untracked);
    if (asked.ok) return asked.activation;
    this.#block(node, activation, 'enqueue', asked.error, true);
    return undefined;
  }

  /** The state an activation sees: its branch's, or the run's. */
  #scopeState(activation: Activation): State {
    const ref = activation.branch;
    return ref === undefined ? this.state : this.fanOuts[ref.fanOut]!.branches[ref.index]!.state;
  }

  /** Removes a pending entry that is done; a real activation counts as a step. */
  #drop(id: string, counts: boolean): void {
    const index = this.pending.findIndex((a) => a.id === id);
    if (index === -1) return;
    const [entry] = this.pending.splice(index, 1);
    if (counts && entry!.blocked === undefined) this.#steps++;
  }

  /** The visit table as this transition may change it: copied at the first change. */
  #ownVisits(): Record<string, number> {
    if (!this.#visitsOwned) {
      this.#visits = Object.assign({}, this.#visits);
      this.#visitsOwned = true;
    }
    return this.#visits as Record<string, number>;
  }

  /** `node:visit` on the main path. */
  #mainId(target: RuntimeNode): string {
    const name = target.def.name;
    const counts = target.repeats || this.#visits[name] !== undefined;
    return `${name}:${counts ? (this.#visits[name] ?? 0) + 1 : 1}`;
  }

  /** The router's choice, the static edge, or undefined after stopping the run. */
  #route(node: RuntimeNode, activation: Activation, state: State): string | undefined {
    const routed = routeOf(node, activation, state, this.graph.untracked);
    if (routed.ok) return routed.target;
    this.#fatal(activation, routed.error);
    return undefined;
  }

  // A broken router is a bug in the graph, not a failure the graph can handle: no onError, and
  // the run stops (even from inside a branch). The completed activation is kept, blocked, so a
  // resume under the fixed graph routes it again without running it again.
  #fatal(activation: Activation, error: ErrorValue): void {
    this.recordError(error);
    this.pending.push(blocked(activation, 'route'));
    this.#finish('failed', error);
  }

  #finish(status: 'failed' | 'cancelled' | 'timed_out', error: ErrorValue): void {
    if (this.#status !== 'running') return;
    this.#status = status;
    this.#error = error;
  }

  #node(name: string): RuntimeNode {
    const node = this.graph.nodes.get(name);
    if (node === undefined)
      throw new Error(`waymark internal: node "${name}" is not in graph "${this.graph.name}"`);
    return node;
  }
}
