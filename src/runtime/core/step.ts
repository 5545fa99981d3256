import type { ErrorClass, ErrorCode } from '../../error/codes.js';
import { type ErrorValue, errorValue } from '../../error/error-value.js';
import type { CompiledGraph, RuntimeNode } from '../../graph/compiled.js';
import { END } from '../../graph/end.js';
import { applyUpdate } from './apply-update.js';
import { backoffDelay, defaultRetryOn } from './backoff.js';
import { resumed } from './checkpoint.js';
import type { Draft, Scheduling } from './draft.js';
import { branchFailed, branchSucceeded, openFanOut, setBranch } from './fan-out.js';
import { deepFreeze } from './freeze.js';
import { readDenial, readView } from './read-view.js';
import type {
  Activation,
  AttemptReport,
  Branch,
  BranchRef,
  Command,
  FanOut,
  Outcome,
  RunEvent,
  RunStatus,
  Snapshot,
  StepResult,
} from './snapshot.js';

/**
 * The runtime's core: `(graph, snapshot, event) -> (snapshot, commands)`. It performs no I/O,
 * reads no clock and never runs a node body; routers and reducers, which are pure by contract,
 * are the only user code it calls. Events about activations that are no longer pending (a late
 * result after a timeout, anything after the run stopped) change nothing.
 */
export function step(graph: CompiledGraph, snapshot: Snapshot, event: RunEvent): StepResult {
  if (event.type === 'resumed') return resumed(graph, snapshot);
  if (event.type === 'migrated') {
    const state = deepFreeze(structuredClone(event.state)) as Snapshot['state'];
    const stamp = { ...snapshot.graph, stateVersion: event.to };
    return { snapshot: { ...snapshot, graph: stamp, state }, commands: [] };
  }
  // A waiting run takes only what resolves a wait: an answer, or the wait's timeout error.
  const waitingForThis =
    snapshot.status === 'waiting' && (event.type === 'answered' || event.type === 'failed');
  // A stopped run that could still be resumed may be cancelled for good (`cancel()` on a store).
  const cancellingStopped =
    event.type === 'cancelled' &&
    snapshot.status !== 'succeeded' &&
    snapshot.status !== 'cancelled';
  if (snapshot.status !== 'running' && !waitingForThis && !cancellingStopped)
    return { snapshot, commands: [] };
  const t = new Transition(graph, snapshot);
  switch (event.type) {
    case 'started':
      t.enqueue(graph.entry, null);
      break;
    case 'completed':
      if (event.usage !== undefined || event.quarantine !== undefined)
        t.report(event.activation, event);
      t.complete(event.activation, event.update);
      break;
    case 'answered':
      t.answer(event.activation, event.answer);
      break;
    case 'failed':
      if (event.usage !== undefined) t.report(event.activation, event);
      t.fail(event.activation, event.error);
      break;
    case 'cancelled':
      t.stop('cancelled', 'RUN_CANCELLED', 'permanent', `the run was cancelled: ${event.reason}`);
      break;
    case 'deadline':
      t.stop(
        'timed_out',
        'RUN_TIMEOUT',
        'timeout',
        `the run passed its time limit of ${event.timeoutMs} ms`,
      );
      break;
    default: {
      const never: never = event as never;
      throw new Error(`unknown run event ${JSON.stringify(never)}`);
    }
  }
  return t.result();
}

/**
 * The working copy of one transition; `step` builds one, mutates it, and freezes the result.
 * Its public members are the {@link Draft} the fan-out rules work on; it is never exported.
 */
class Transition implements Draft {
  readonly graph: CompiledGraph;
  readonly #before: Snapshot;
  state: Snapshot['state'];
  pending: Activation[];
  fanOuts: Record<string, FanOut>;
  readonly editing = new Set<string>();
  #visits: Snapshot['visits'];
  #steps: number;
  #errors: Snapshot['errors'];
  #spent: Snapshot['spent'];
  #quarantine: Snapshot['quarantine'];
  #status: RunStatus = 'running';
  #error: ErrorValue | undefined;
  #outcome: Outcome | undefined;
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
  }

  /**
   * Books what an attempt reported: its usage into the run's spend (tokens are spent whether or
   * not the attempt succeeded), its quarantined outputs into the run's quarantine. A late report
   * (the activation is no longer pending: it timed out, the run stopped) is not booked: the run
   * already moved on without it.
   */
  report(id: string, report: AttemptReport): void {
    const activation = this.pending.find((a) => a.id === id);
    if (activation === undefined) return;
    const { usage, quarantine } = report;
    if (usage !== undefined) {
      this.#spent = {
        inputTokens: this.#spent.inputTokens + usage.inputTokens,
        outputTokens: this.#spent.outputTokens + usage.outputTokens,
        costUsd: this.#spent.costUsd + (usage.costUsd ?? 0),
      };
    }
    if (quarantine !== undefined && quarantine.length > 0) {
      const { node } = activation;
      this.#quarantine = [
        ...this.#quarantine,
        ...quarantine.map((q) => deepFreeze({ node, activation: id, ...q })),
      ];
    }
  }

  get running(): boolean {
    return this.#status === 'running';
  }

  /** Schedules a new activation of `node`, unless a cap or the step limit stops it. */
  enqueue(node: string, parent: string | null, how: Scheduling = {}): void {
    if (this.#status !== 'running') return;
    const target = this.#node(node);
    const visit = target.repeats ? (this.#visits[node] ?? 0) + 1 : 1;
    const { branch } = how;
    const id = branch === undefined ? `${node}:${visit}` : this.#branchId(branch, node);
    if (visit > target.cap) {
      const message = `node "${node}" reached its visit cap of ${target.cap} after ${this.#steps} steps`;
      const error = errorValue({ node, activation: id, attempt: 0 }, 'VISIT_CAP', 'cap', message, {
        cap: target.cap,
        steps: this.#steps,
      });
      // An onError route that runs into a cap again (a capped node routing errors to itself)
      // would recurse without end: the second cap in a row is not routed again.
      this.failFinally(target, error, branch, how.cause?.code !== 'VISIT_CAP');
      return;
    }
    if (this.#steps >= this.#before.limits.maxSteps) {
      const message = `the run reached its limit of ${this.#before.limits.maxSteps} steps before "${node}"`;
      this.#finish(
        'failed',
        errorValue({ node, activation: id, attempt: 0 }, 'STEP_LIMIT', 'cap', message),
      );
      return;
    }
    // A node that runs at most once is visit 1 by construction: not counting it keeps the copy
    // below as small as the set of looping nodes, instead of growing along a chain.
    if (target.repeats) {
      // Copy then set: a spread with a computed key is a slow path in V8.
      const visits: Record<string, number> = Object.assign({}, this.#visits);
      visits[node] = visit;
      this.#visits = visits;
    }
    const activation: Activation =
      how.cause === undefined && branch === undefined && how.join === undefined
        ? { id, node, attempt: 1, parent }
        : {
            id,
            node,
            attempt: 1,
            parent,
            ...(how.cause !== undefined && { error: how.cause }),
            ...(branch !== undefined && { branch }),
            ...(how.join !== undefined && { join: how.join }),
          };
    if (target.wait !== undefined) {
      this.#openWait(target, activation, branch);
      return;
    }
    this.pending.push(activation);
    this.#commands.push({ type: 'execute', activation, delayMs: 0 });
  }

  complete(id: string, update: unknown): void {
    const index = this.pending.findIndex((a) => a.id === id);
    if (index === -1) return;
    const activation = this.pending[index]!;
    const node = this.#node(activation.node);
    const { branch } = activation;
    const before =
      branch === undefined ? this.state : this.fanOuts[branch.fanOut]!.branches[branch.index]!;
    const scope = branch === undefined ? this.state : (before as Branch).state;
    const applied = applyUpdate(this.graph, node, scope, update);
    if (!applied.ok) {
      const where = { node: node.def.name, activation: id, attempt: activation.attempt };
      this.fail(id, errorValue(where, applied.code, 'permanent', applied.message, applied.details));
      return;
    }
    if (branch === undefined) {
      this.state = applied.state;
    } else if (applied.fields !== undefined) {
      const updates = [...(before as Branch).updates, applied.fields];
      setBranch(this, branch, { state: applied.state, updates });
    }
    this.#steps++;
    this.pending.splice(index, 1);
    this.#outcome = { activation, status: 'succeeded', retrying: false };
    if (node.fanOut !== undefined) {
      openFanOut(this, node.fanOut, activation);
      return;
    }
    const next = this.#route(node, activation, applied.state);
    if (next === undefined || !this.running) return;
    if (branch !== undefined && next === this.fanOuts[branch.fanOut]!.join) {
      branchSucceeded(this, branch);
    } else if (next !== END) {
      this.enqueue(next, id, branch === undefined ? {} : { branch });
    }
  }

  /** Applies a person's answer as the node's update (parsed again: the schema may transform). */
  answer(id: string, answer: unknown): void {
    const activation = this.pending.find((a) => a.id === id);
    if (activation?.waiting === undefined) return;
    const node = this.#node(activation.node);
    const wait = node.wait!;
    const parsed = wait.answer.safeParse(answer);
    const where = { node: node.def.name, activation: id, attempt: activation.attempt };
    if (!parsed.success) {
      const message = `the answer to "${node.def.name}" does not match its schema: ${parsed.error.issues[0]?.message}`;
      this.fail(
        id,
        errorValue(where, 'ANSWER_INVALID', 'permanent', message, { issues: parsed.error.issues }),
      );
      return;
    }
    let update: unknown;
    try {
      update = wait.update(parsed.data, this.#nodeState(node, activation));
    } catch (cause) {
      const denied = readDenial(cause);
      if (denied !== undefined) {
        this.fail(
          id,
          errorValue(where, 'READ_DENIED', 'permanent', denied.message, denied.details),
        );
        return;
      }
      const message = `turning the answer to "${node.def.name}" into an update threw: ${cause instanceof Error ? cause.message : String(cause)}`;
      this.fail(id, errorValue(where, 'NODE_FAILED', 'permanent', message));
      return;
    }
    this.complete(id, update);
  }

  fail(id: string, error: ErrorValue): void {
    const index = this.pending.findIndex((a) => a.id === id);
    if (index === -1) return;
    const activation = this.pending[index]!;
    const node = this.#node(activation.node);
    const policy = node.def.retry;
    const retryOn: readonly string[] = policy?.retryOn ?? defaultRetryOn;
    if (
      node.traits.retryable &&
      policy &&
      activation.attempt < policy.attempts &&
      retryOn.includes(error.class)
    ) {
      const retry: Activation = { ...activation, attempt: activation.attempt + 1 };
      this.pending[index] = retry;
      this.#commands.push({
        type: 'execute',
        activation: retry,
        delayMs: backoffDelay(policy, activation.attempt),
      });
      this.#outcome = { activation, status: 'failed', error, retrying: true };
      return;
    }
    this.#outcome = { activation, status: 'failed', error, retrying: false };
    if (node.def.onError !== undefined || activation.branch !== undefined) {
      // Handled (by a route or by the branch's join): the activation is done, as a failure.
      this.pending.splice(index, 1);
      this.#steps++;
    }
    // Otherwise the failed activation stays pending, so a resume can try it again.
    this.failFinally(node, error, activation.branch);
  }

  failFinally(
    node: RuntimeNode,
    error: ErrorValue,
    branch: BranchRef | undefined,
    mayRoute = true,
  ): void {
    this.recordError(error);
    if (node.def.onError !== undefined && mayRoute) {
      this.enqueue(
        node.def.onError,
        error.activation,
        branch === undefined ? { cause: error } : { cause: error, branch },
      );
    } else if (branch !== undefined) {
      branchFailed(this, branch, error);
    } else {
      this.#finish('failed', error);
    }
  }

  recordError(error: ErrorValue): void {
    this.#errors = [...this.#errors, error];
  }

  abort(ids: readonly string[]): void {
    const doomed = new Set(ids);
    this.pending = this.pending.filter((a) => !doomed.has(a.id));
    this.#commands.push({ type: 'abort', activations: ids });
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
  }

  result(): StepResult {
    if (this.#status === 'running' && this.pending.length === 0) this.#status = 'succeeded';
    // Nothing can happen until someone answers: the run waits, and no process needs to stay.
    else if (this.#status === 'running' && this.pending.every((a) => a.waiting !== undefined))
      this.#status = 'waiting';
    const status = this.#status;
    const { runId, limits, graph } = this.#before;
    const [state, pending, fanOuts] = [this.state, this.pending, this.fanOuts];
    const [visits, steps, errors] = [this.#visits, this.#steps, this.#errors];
    const [spent, quarantine] = [this.#spent, this.#quarantine];
    // Two literal shapes instead of spreads: this runs once per step and spreads cost ~1 us here.
    const snapshot: Snapshot =
      status === 'failed' || status === 'cancelled' || status === 'timed_out'
        ? {
            status,
            runId,
            graph,
            state,
            pending,
            visits,
            steps,
            errors,
            fanOuts,
            limits,
            spent,
            quarantine,
            error: this.#error!,
          }
        : {
            status,
            runId,
            graph,
            state,
            pending,
            visits,
            steps,
            errors,
            fanOuts,
            limits,
            spent,
            quarantine,
          };
    const commands = this.#commands;
    const outcome = this.#outcome;
    return outcome === undefined ? { snapshot, commands } : { snapshot, commands, outcome };
  }

  /** Puts a person node's activation in pending as a wait, and asks the shell to record it. */
  #openWait(node: RuntimeNode, activation: Activation, branch: BranchRef | undefined): void {
    let prompt: string;
    try {
      prompt = String(node.wait!.prompt(this.#nodeState(node, activation)));
    } catch (cause) {
      const where = { node: node.def.name, activation: activation.id, attempt: 0 };
      const denied = readDenial(cause);
      const error =
        denied === undefined
          ? errorValue(
              where,
              'NODE_FAILED',
              'permanent',
              `the prompt of "${node.def.name}" threw: ${cause instanceof Error ? cause.message : String(cause)}`,
            )
          : errorValue(where, 'READ_DENIED', 'permanent', denied.message, denied.details);
      this.failFinally(node, error, branch);
      return;
    }
    const waiting: Activation = {
      ...activation,
      waiting: { requestId: `${this.#before.runId}/${activation.id}`, prompt },
    };
    this.pending.push(waiting);
    this.#commands.push({ type: 'wait', activation: waiting });
  }

  /** The state an activation sees: its branch's, or the run's. */
  #scopeState(activation: Activation): Snapshot['state'] {
    const ref = activation.branch;
    return ref === undefined ? this.state : this.fanOuts[ref.fanOut]!.branches[ref.index]!.state;
  }

  /** What a person node's prompt and answer see: its scope's state, limited to its `reads`. */
  #nodeState(node: RuntimeNode, activation: Activation): Snapshot['state'] {
    const state = this.#scopeState(activation);
    return node.reads === undefined
      ? state
      : readView(node.reads, state, `node "${node.def.name}"`);
  }

  /** `fanOut[index]/node:n`, counting visits within the branch so ids do not depend on timing. */
  #branchId(ref: BranchRef, node: string): string {
    const branch = this.fanOuts[ref.fanOut]!.branches[ref.index]!;
    const visit = (branch.visits[node] ?? 0) + 1;
    setBranch(this, ref, { visits: { ...branch.visits, [node]: visit } });
    return `${ref.fanOut}[${ref.index}]/${node}:${visit}`;
  }

  /** The router's choice, the static edge, or undefined after failing the run. */
  #route(node: RuntimeNode, activation: Activation, state: Snapshot['state']): string | undefined {
    const router = node.router;
    if (router === undefined) return node.next;
    const name = node.def.name;
    let target: unknown;
    try {
      // The router sees what its node may read and write: it decides on what the node found, and
      // cannot route on a field the node neither read nor wrote.
      const access = node.routerReads;
      const view =
        access === undefined ? state : readView(access, state, `the router of "${name}"`);
      target = router.fn(view);
    } catch (cause) {
      const denied = readDenial(cause);
      if (denied !== undefined) {
        this.#fatal(activation, 'READ_DENIED', denied.message, { router: name, ...denied.details });
        return undefined;
      }
      const message = `the router of "${name}" threw: ${cause instanceof Error ? cause.message : String(cause)}`;
      this.#fatal(activation, 'ROUTER_FAILED', message, { router: name });
      return undefined;
    }
    if (typeof target === 'string' && router.targets.has(target)) return target;
    const declared = [...router.targets].join(', ');
    const message = `the router of "${name}" returned ${JSON.stringify(target) ?? String(target)}, not one of its declared targets [${declared}]`;
    this.#fatal(activation, 'ROUTE_UNDECLARED', message, {
      router: name,
      value: String(target),
      targets: [...router.targets],
    });
    return undefined;
  }

  // A broken router is a bug in the graph, not a failure the graph can handle: no onError.
  #fatal(activation: Activation, code: ErrorCode, message: string, details: unknown): void {
    const where = { node: activation.node, activation: activation.id, attempt: activation.attempt };
    const error = errorValue(where, code, 'permanent', message, details);
    this.recordError(error);
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
