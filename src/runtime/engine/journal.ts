import { isWaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import { limitKeyOf } from '../../graph/concurrency.js';
import type { Commit, NewRun, Store, StoredEvent } from '../../store/store.js';
import type { WorkQueue } from '../../store/work-queue.js';
import type { Clock } from '../clock.js';
import { decodeEvent, encodeEvent, encodeSnapshot, encodeTrace } from '../codec/codec.js';
import type { RunEvent, Snapshot, StepResult } from '../core/snapshot.js';
import { step } from '../core/step.js';
import type { TraceEntry } from '../watch/trace.js';
import { patiently } from './patiently.js';

/** One step a journal records: its event, the snapshot after it, what it ended and opened. */
export interface JournalStep {
  readonly event: RunEvent;
  readonly after: Snapshot;
  readonly trace: readonly TraceEntry[];
  readonly extras?: CommitExtras | undefined;
}

/** Default number of events between two full snapshots. */
export const defaultSnapshotEvery = 100;

/** What a step's commit carries besides its event: waits and timers, and a worker's tasks. */
export type CommitExtras = Pick<Commit, 'waits' | 'timers' | 'schedule'>;

/**
 * Writes a run's history to a store: one commit per step, holding the event (whose size follows
 * the node's update, not the state), the trace entries it ended, the run's new status, and what
 * the step opened or closed (waits, timers) in the same transaction; a full snapshot every
 * `snapshotEvery` events and whenever the run stops, so a load replays at most that many events
 * through `step`. Every commit is fenced by the seq it follows and by the lease epoch it is
 * made under. A worker's fold commits its steps together (`recordAll`): one transaction, the
 * same rows.
 */
export class Journal {
  readonly #store: Store;
  readonly #graph: CompiledGraph;
  readonly #runId: string;
  readonly #clock: Clock;
  readonly #every: number;
  #seq: number;
  #epoch: number | null;
  #sinceSnapshot = 0;
  #lastAt = 0;
  #traceparent: string | undefined;
  // Set while a segment's own trace context is not yet in any stored snapshot.
  #traceUnsaved = false;

  constructor(
    store: Store,
    graph: CompiledGraph,
    runId: string,
    seq: number,
    clock: Clock,
    options: {
      readonly every?: number;
      readonly epoch?: number | null;
      /** Events committed since the run's latest snapshot, which the next load replays. */
      readonly sinceSnapshot?: number;
    } = {},
  ) {
    this.#store = store;
    this.#graph = graph;
    this.#runId = runId;
    this.#seq = seq;
    this.#clock = clock;
    this.#every = options.every ?? defaultSnapshotEvery;
    this.#epoch = options.epoch ?? null;
    this.#sinceSnapshot = options.sinceSnapshot ?? 0;
  }

  /** Records a new run with its initial snapshot (sequence 0). */
  static async create(
    store: Store,
    graph: CompiledGraph,
    snapshot: Snapshot,
    clock: Clock,
    every?: number,
    labels?: Readonly<Record<string, string>>,
    traceparent?: string,
    sources?: readonly string[],
  ): Promise<Journal> {
    const made = newRunOf(graph, snapshot, clock, labels, traceparent);
    // The runs it reads outputs from, so that none of them is deleted while it goes on.
    const run = sources === undefined || sources.length === 0 ? made : { ...made, sources };
    await patiently(async (retried) => {
      try {
        await store.createRun(run);
      } catch (error) {
        // A first try whose reply was lost may have made the run: this one, if it is as made.
        if (!retried || !isWaymarkError(error) || error.code !== 'RUN_EXISTS') throw error;
        const made = await store.getRun(run.id);
        if (made?.createdAt !== run.createdAt || made.graphHash !== run.graphHash) throw error;
      }
    });
    return new Journal(store, graph, snapshot.runId, 0, clock, {
      ...(every !== undefined && { every }),
    });
  }

  /** The seq of the last commit this journal made or caught up to. */
  get seq(): number {
    return this.#seq;
  }

  /** When the last commit this journal made was made (its `at`); 0 before any. */
  get lastAt(): number {
    return this.#lastAt;
  }

  /** The lease epoch every commit from now on is fenced by. */
  set epoch(epoch: number | null) {
    this.#epoch = epoch;
  }

  /**
   * The trace context kept with every snapshot this journal writes (trace-context.ts). `own`:
   * the context of the segment writing, also written with its next commit (one snapshot more
   * per traced segment), so that a segment that dies before its next due snapshot is still the
   * one the next segment links to.
   */
  keepTrace(traceparent: string | undefined, own: boolean): void {
    this.#traceparent = traceparent;
    this.#traceUnsaved = own && traceparent !== undefined;
  }

  /** Commits one step; rejects (and records nothing) on a conflict, a lost lease or a store failure. */
  async record(
    event: RunEvent,
    after: Snapshot,
    trace: readonly TraceEntry[],
    extras?: CommitExtras,
    release = false,
  ): Promise<void> {
    const snapshot = this.#snapshotDue(after, 1);
    const commit = this.#commitOf(
      this.#seq + 1,
      { event, after, trace, extras },
      snapshot,
      release,
    );
    await this.#store.commit(this.#runId, commit);
    this.#seq++;
    this.#lastAt = commit.at;
    this.#sinceSnapshot = snapshot === null ? this.#sinceSnapshot + 1 : 0;
    if (snapshot !== null) this.#traceUnsaved = false;
  }

  /**
   * Commits several steps in one transaction (a worker's fold), all or none, with a snapshot
   * after the last one when one is due within them; `release` gives the lease up with them.
   */
  async recordAll(
    store: Pick<WorkQueue, 'commitAll'>,
    steps: readonly JournalStep[],
    release = false,
  ): Promise<readonly Commit[]> {
    if (steps.length === 0) return [];
    // A snapshot wherever one falls due within the group, as one commit at a time would write
    // them: a load replays at most `every` events however the steps were grouped.
    let since = this.#sinceSnapshot;
    let unsaved = this.#traceUnsaved;
    const commits = steps.map((s, i) => {
      const last = i === steps.length - 1;
      since++;
      const due = since >= this.#every || (last && (s.after.status !== 'running' || unsaved));
      const snapshot = due ? encodeSnapshot(s.after, this.#graph, this.#traceparent) : null;
      if (due) {
        since = 0;
        unsaved = false;
      }
      return this.#commitOf(this.#seq + 1 + i, s, snapshot, last && release);
    });
    await store.commitAll(this.#runId, commits);
    this.#seq += steps.length;
    this.#lastAt = commits.at(-1)!.at;
    this.#sinceSnapshot = since;
    this.#traceUnsaved = unsaved;
    return commits;
  }

  /** The snapshot to write with `count` more steps ending at `after`: when it stops, or every K. */
  #snapshotDue(after: Snapshot, count: number): string | null {
    const due =
      after.status !== 'running' ||
      this.#sinceSnapshot + count >= this.#every ||
      this.#traceUnsaved;
    return due ? encodeSnapshot(after, this.#graph, this.#traceparent) : null;
  }

  #commitOf(seq: number, s: JournalStep, snapshot: string | null, release: boolean): Commit {
    const { after, extras } = s;
    const commit: { -readonly [K in keyof Commit]: Commit[K] } = {
      seq,
      at: this.#clock.now(),
      event: encodeEvent(s.event, this.#graph),
      trace: encodeTrace(s.trace),
      status: after.status,
      error: 'error' in after ? JSON.stringify(after.error) : null,
      snapshot,
      epoch: this.#epoch,
    };
    // Assigned, not spread: this runs once per durable step.
    if (extras?.waits !== undefined) commit.waits = extras.waits;
    if (extras?.timers !== undefined) commit.timers = extras.timers;
    if (extras?.schedule !== undefined) commit.schedule = extras.schedule;
    if (release && this.#epoch !== null) commit.release = true;
    return commit;
  }

  /**
   * After a conflict: the events another process committed since this journal's seq (a
   * cancellation, say), folded into `snapshot` through `step`, so the caller can take its own
   * event again on top of them instead of failing.
   */
  async catchUp(
    snapshot: Snapshot,
    onStep?: (stored: StoredEvent, before: Snapshot, event: RunEvent, result: StepResult) => void,
  ): Promise<Snapshot> {
    let current = snapshot;
    for (const stored of await this.#store.events(this.#runId, this.#seq)) {
      const event = decodeEvent(stored.event, this.#runId, stored.seq);
      const result = step(this.#graph, current, event);
      onStep?.(stored, current, event, result);
      current = result.snapshot;
      this.#seq = stored.seq;
      this.#lastAt = stored.at;
      this.#sinceSnapshot++;
    }
    return current;
  }
}

/**
 * Where a store takes several consecutive commits of one run: its own `commitAll` (one
 * transaction), or, for a store without one, each commit in turn, each fenced on its own (a
 * conflict half-way is caught up with like any other, and the steps that landed are then read
 * back, not taken twice).
 *
 * @example
 * await journal.recordAll(groupWriter(store), steps);
 */
export function groupWriter(store: Store): Pick<WorkQueue, 'commitAll'> {
  const queue = store as Partial<WorkQueue>;
  if (typeof queue.commitAll === 'function') return queue as Pick<WorkQueue, 'commitAll'>;
  return {
    commitAll: async (runId, commits) => {
      for (const commit of commits) await store.commit(runId, commit);
    },
  };
}

/**
 * The row of a new run, with its initial snapshot (sequence 0).
 *
 * @example
 * await store.createRun(newRunOf(graph, snapshot, clock));
 */
export function newRunOf(
  graph: CompiledGraph,
  snapshot: Snapshot,
  clock: Clock,
  labels?: Readonly<Record<string, string>>,
  traceparent?: string,
): NewRun {
  const stamp = snapshot.graph;
  return {
    id: snapshot.runId,
    graph: stamp.name,
    graphHash: stamp.hash,
    graphVersion: stamp.version,
    stateVersion: stamp.stateVersion,
    createdAt: clock.now(),
    status: snapshot.status,
    snapshot: encodeSnapshot(snapshot, graph, traceparent),
    labels: labels === undefined ? null : JSON.stringify(labels),
    ...(graph.limits !== undefined && {
      limit: {
        key: limitKeyOf(graph.name, graph.limits, snapshot.state),
        concurrency: graph.limits.concurrency,
      },
    }),
  };
}
