import { storeLedger } from '../../effects/ledger.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import { keepsRates } from '../../store/rates.js';
import type { InboxRecord, Lease, LoadedRun, Store } from '../../store/store.js';
import type { WorkQueue } from '../../store/work-queue.js';
import type { Attempt } from '../attempt/execute.js';
import { LocalExecutor } from '../attempt/executor.js';
import { type Clock, monotonicMs } from '../clock.js';
import { decodeAttempt } from '../codec/codec.js';
import { currentSnapshot } from '../codec/current.js';
import { recordedAttempt } from '../codec/untracked.js';
import type { Activation, Snapshot } from '../core/snapshot.js';
import type { Due, RunBook } from '../engine/book.js';
import { Drive, type DriveEnd } from '../engine/drive.js';
import { Journal } from '../engine/journal.js';
import { LeaseKeeper } from '../engine/lease-keeper.js';
import { TraceRecorder } from '../engine/trace-recorder.js';
import { resumeEvents } from '../engine/waits.js';
import { queuedFor } from '../local/queued.js';
import type { TaskTelemetry, Telemetry } from '../watch/telemetry.js';
import { attemptEntry } from '../watch/telemetry-step.js';
import { storedTraceparent } from '../watch/trace-context.js';

/** A place to run one node body in, taken from a worker's concurrency; given back once. */
export interface Slot {
  free(): void;
}

/** A run a fold kept driving here, under its lease: its drive, and when it ends. */
export interface HeldDrive {
  readonly drive: Drive;
  readonly ended: Promise<DriveEnd>;
}

/** What one fold did: the events it committed, and how the run stands after them. */
export interface Folded {
  readonly committed: number;
  readonly status: Snapshot['status'];
  /** The run's lease was given up with the fold's commit: the caller has nothing to release. */
  readonly released: boolean;
  /**
   * The run's sole next activation runs here (`hold`): the drive goes on with it, still holding
   * the run's lease, and gives it up when it is done.
   */
  readonly held?: HeldDrive;
}

/** Options of {@link foldRun}. */
export interface FoldOptions {
  /**
   * Asked when a fold leaves the run with one activation to run and nothing else in flight: a
   * slot if the caller runs it here, under the run's lease, instead of queueing it as a task
   * (a worker with room).
   */
  readonly hold?: () => Slot | undefined;
  /** Where the fold's commits go: a worker's batching committer; by default, the store. */
  readonly committer?: Pick<WorkQueue, 'commitAll'>;
  /** Who renews the run's lease while it is held; by default one of the fold's own. */
  readonly keeper?: LeaseKeeper;
  /** When the claim that returned the lease was sent, by `monotonicMs()`. Default: now. */
  readonly sentAt?: number;
  /** The lease's length, for a keeper of the fold's own. Default 10,000 ms. */
  readonly leaseMs?: number;
  /** Who is told of the attempts run here, with the id of the worker running them. */
  readonly telemetry?: { readonly telemetry: Telemetry; readonly worker: string };
  /** Told after each commit of the run, as `Drive` tells it. */
  readonly onBooked?: (committed: number, status: Snapshot['status']) => void;
  /** Told once an attempt run here was committed (or, with `false`, dropped: the run was lost). */
  readonly onAttempt?: (activation: Activation, recorded: boolean) => void;
  /**
   * Told when the run held here was stopped by another process (a cancellation, which takes no
   * lease): the body running here has its signal aborted as the drive folds the cancellation in.
   */
  readonly onStopped?: (activation: Activation | undefined) => void;
}

/**
 * The worker host of the one engine ({@link Drive}): under the run's lease, it folds what is due
 * (the start of a run that was enqueued, the attempts in its inbox in arrival order, a passed
 * deadline, answers and wait timeouts, or, for a run whose driver died, a resume) and commits
 * every event that changed something in one transaction, fenced by seq and the lease's epoch,
 * giving the lease up with it. What a step schedules becomes tasks in that transaction, what it
 * cancels is deleted, and the inbox items folded go with it. With `hold`, the run's sole next
 * activation runs here instead (a chain's next node, a map's join, a one-node run), its start
 * committed with that activation's end; the drive goes on while the run stays sequential and
 * the worker has room (`Folded.held`). `read` is the run and its inbox as the caller read them
 * under the lease, if it did.
 * @throws WaymarkError `LEASE_LOST` when another worker took the run over; `STORE_CORRUPT`
 *   naming the run when a stored row of it cannot be read; `STORE_*`. The caller keeps the
 *   lease then: it decides what the failure costs the run before letting it go.
 *
 * @example
 * for (const claimed of await store.claimAndLoadRuns(claim)) await foldRun(store, graph, claimed.lease, clock, claimed);
 */
export async function foldRun(
  store: Store & WorkQueue,
  graph: CompiledGraph,
  lease: Lease,
  clock: Clock,
  read?: { readonly run: LoadedRun; readonly inbox: readonly InboxRecord[] },
  options: FoldOptions = {},
): Promise<Folded> {
  const runId = lease.runId;
  const sentAt = options.sentAt ?? monotonicMs();
  const run = read?.run ?? (await store.loadRun(runId));
  if (run === undefined) return { committed: 0, status: 'cancelled', released: false };
  const snapshot = currentSnapshot(graph, run);
  // Counting from the run's latest snapshot, not from this fold, is what keeps a load
  // replaying at most `every` events however few each fold commits.
  const journal = new Journal(store, graph, runId, run.run.seq, clock, {
    epoch: lease.epoch,
    sinceSnapshot: run.events.length,
  });
  // A fold is bookkeeping, not a segment: it keeps the run's trace context as it found it, for
  // the snapshots it writes and for the tasks it schedules (their worker spans' parent).
  const traceparent = storedTraceparent(run.snapshot.data);
  journal.keepTrace(traceparent, false);
  const inbox = read?.inbox ?? (await store.inbox(runId));
  const due = await dueItems(store, graph, snapshot, run.run.seq, inbox, clock.now());
  const keeper = options.keeper ?? new LeaseKeeper(store, { leaseMs: options.leaseMs ?? 10_000 });
  const here = new HeldHere(options, graph, runId, traceparent);
  const drive = new Drive({
    graph,
    clock,
    snapshot,
    trace: new TraceRecorder(),
    journal,
    store,
    ...(options.committer !== undefined && { writer: options.committer }),
    schedulesTasks: true,
    ...(traceparent !== undefined && { traceparent }),
    lease: { lease, sentAt, keeper },
    executor: (done) =>
      new LocalExecutor(
        graph,
        {
          clock,
          ledger: storeLedger(store, runId, () => clock.now()),
          hashInputs: true,
          memos: store,
          ...(keepsRates(store) && { rates: store }),
          scope: (activation, kind) => here.scope(activation, kind),
          onDone: (activation) => here.done(activation),
        },
        (attempt) => {
          here.ended(attempt);
          // A worker's steps start untracked fields from their defaults, whether the next one
          // runs here or on another worker: what a held attempt wrote to one is not kept.
          done(recordedAttempt(graph, attempt));
        },
      ),
    keep: (book) => here.keep(book),
    kept: (kept) => here.kept(kept),
    deferStart: true,
    releaseOnError: false,
    onCommitted: (s) => {
      if (s.attempt !== undefined) here.recorded(s.attempt, true);
    },
    ...(options.onBooked !== undefined && { onBooked: options.onBooked }),
    onLoss: (why) => {
      if (why === 'stopped') options.onStopped?.(drive.snapshot.pending[0]);
    },
  });
  const ended = drive.run(due).finally(async () => {
    here.dropped();
    if (options.keeper === undefined) await keeper.stop();
  });
  let folded: Awaited<typeof drive.folded>;
  try {
    folded = await drive.folded;
  } catch (error) {
    await ended.catch(() => {});
    throw error;
  }
  const result = {
    committed: folded.committed,
    status: folded.status,
    released: folded.released,
  };
  if (!folded.continues) {
    await ended;
    return result;
  }
  return { ...result, held: { drive, ended } };
}

/**
 * The worker's side of a run it holds: the slot its activation runs in, and the telemetry of
 * each attempt run here, told once the attempt's commit landed (or the run was lost).
 */
class HeldHere {
  readonly #options: FoldOptions;
  readonly #graph: CompiledGraph;
  readonly #runId: string;
  readonly #traceparent: string | undefined;
  /** A slot taken for the activation a commit may keep, until the commit says. */
  #reserved: Slot | undefined;
  readonly #slots = new Map<string, Slot>();
  readonly #spans = new Map<
    string,
    { readonly task: TaskTelemetry; readonly activation: Activation; readonly kind: string }
  >();
  readonly #attempts = new Map<string, Attempt>();

  constructor(
    options: FoldOptions,
    graph: CompiledGraph,
    runId: string,
    traceparent: string | undefined,
  ) {
    this.#options = options;
    this.#graph = graph;
    this.#runId = runId;
    this.#traceparent = traceparent;
  }

  keep(book: RunBook): readonly Activation[] {
    if (this.#options.hold === undefined) return [];
    const next = book.soleNext();
    if (next === undefined) return [];
    this.#reserved ??= this.#options.hold();
    return this.#reserved === undefined ? [] : [next];
  }

  kept(kept: readonly Activation[]): void {
    const slot = this.#reserved;
    if (slot === undefined) return;
    this.#reserved = undefined;
    if (kept.length === 0) slot.free();
    else this.#slots.set(kept[0]!.id, slot);
  }

  /** An attempt starts here: a task span, under the trace context the run stored. */
  scope(activation: Activation, kind: Parameters<Telemetry['task']>[0]['kind']) {
    const telemetry = this.#options.telemetry;
    if (telemetry === undefined) return undefined;
    const graph = this.#graph;
    const task = telemetry.telemetry.task({
      runId: this.#runId,
      graph: { name: graph.name, hash: graph.hash, version: graph.version },
      activation,
      kind,
      worker: telemetry.worker,
      parent: this.#traceparent,
    });
    if (task !== undefined) this.#spans.set(activation.id, { task, activation, kind });
    return task;
  }

  /** The body is done: its slot is free while its result is committed. */
  done(activation: Activation): void {
    this.#slots.get(activation.id)?.free();
    this.#slots.delete(activation.id);
  }

  ended(attempt: Attempt): void {
    this.#attempts.set(attempt.event.activation, attempt);
  }

  recorded(attempt: Attempt, recorded: boolean): void {
    const id = attempt.event.activation;
    if (!this.#attempts.delete(id)) return;
    const span = this.#spans.get(id);
    this.#spans.delete(id);
    if (span !== undefined)
      span.task.ended(attemptEntry(span.activation, attempt), {
        kind: span.kind as never,
        recorded,
      });
    const activation =
      span?.activation ?? ({ id, node: '', attempt: attempt.event.attempt ?? 1 } as Activation);
    this.#options.onAttempt?.(activation, recorded);
  }

  /** The drive ended: attempts that ended here and were not committed were dropped. */
  dropped(): void {
    for (const attempt of [...this.#attempts.values()]) this.recorded(attempt, false);
    this.#reserved?.free();
    this.#reserved = undefined;
    for (const slot of this.#slots.values()) slot.free();
    this.#slots.clear();
  }
}

/**
 * What a fold owes a run now: its start, its inbox, what is due by time, and for a run left
 * `running` with nothing queued (its in-process driver died), a resume that schedules its
 * pending activations as tasks.
 */
async function dueItems(
  store: Store & WorkQueue,
  graph: CompiledGraph,
  snapshot: Snapshot,
  seq: number,
  inbox: readonly InboxRecord[],
  now: number,
): Promise<Due[]> {
  const due: Due[] = [];
  // A run queued for its key's slot is not started: a wake-up in its inbox says when it may be.
  if (seq === 0 && snapshot.status === 'running') {
    if ((await queuedFor(store, graph, snapshot.runId)) === undefined)
      due.push({ event: { type: 'started' } });
  }
  for (const item of inbox) {
    if (item.attempt === null) {
      due.push({ inboxId: item.id });
      continue;
    }
    const attempt = decodeAttempt(item.attempt, snapshot.runId, item.id);
    due.push({ event: attempt.event, attempt, inboxId: item.id });
  }
  for (const event of await resumeEvents(store, graph, snapshot, now)) due.push({ event });
  const orphaned =
    due.length === 0 &&
    seq > 0 &&
    snapshot.status === 'running' &&
    (await store.listTasks(snapshot.runId)).length === 0;
  if (orphaned) due.push({ event: { type: 'resumed' } });
  return due;
}
