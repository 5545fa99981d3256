import type { CompiledGraph } from '../../graph/compiled.js';
import type { TimerRecord, WaitRecord } from '../../store/store.js';
import type { Command, RunEvent, Snapshot } from '../core/snapshot.js';
import type { CommitExtras } from './journal.js';
import { deadlineTimer, sleepTimer, waitRecord, waitTimer } from './waits.js';

/**
 * The waits and timers a step opens, closes, sets and clears, from what its transition did:
 * written in the step's commit, so another process finds them exactly when the step is there.
 * Nothing for a step that touches neither, which is nearly every step.
 *
 * @example
 * const extras = commitExtras(graph, event, before, after, commands, clock.now());
 */
export function commitExtras(
  graph: CompiledGraph,
  event: RunEvent,
  before: Snapshot,
  after: Snapshot,
  commands: readonly Command[],
  now: number,
): CommitExtras | undefined {
  if (!touchesWaitsOrTimers(event, before, after, commands)) return undefined;
  const open: WaitRecord[] = [];
  const close: string[] = [];
  const set: TimerRecord[] = [];
  const clear: string[] = [];
  const runId = after.runId;
  for (const command of commands) {
    if (command.type === 'wait') {
      open.push(waitRecord(graph, runId, command.activation, now));
      // A resume records its waits again: their timeouts count from when they first opened.
      const timer =
        event.type === 'resumed' ? undefined : waitTimer(graph, runId, command.activation, now);
      if (timer !== undefined) set.push(timer);
    } else if (command.type === 'closeWaits') {
      close.push(...command.requestIds);
      clear.push(...command.requestIds.map((id) => `wait:${id}`));
    } else if (command.type === 'sleep') {
      // A `for` sleep learns its time from the `slept` event stepped right after it.
      const until = command.activation.sleeping?.until;
      if (until !== undefined) set.push(sleepTimer(runId, command.activation.id, until));
    } else if (command.type === 'endSleeps') {
      clear.push(...command.activations.map((id) => sleepTimer(runId, id, 0).id));
    }
  }
  if (event.type === 'answered' || event.type === 'failed') {
    const resolved = before.pending.find((a) => a.id === event.activation)?.waiting;
    if (
      resolved !== undefined &&
      !after.pending.some((a) => a.waiting?.requestId === resolved.requestId)
    ) {
      clear.push(`wait:${resolved.requestId}`);
      // Failed unanswered (its deadline passed): nothing will apply an answer to it now. An
      // answered wait stays as it is: the store closes only unanswered ones.
      if (event.type === 'failed') close.push(resolved.requestId);
    }
  }
  // The deadline's timer is there while the run can still run: set when it starts or resumes
  // (or gets a new deadline), cleared when it stops, whichever way (a resume sets it again).
  const deadline = after.limits.deadlineAt;
  const live = after.status === 'running' || after.status === 'waiting';
  const wasLive = before.status === 'running' || before.status === 'waiting';
  const starts = event.type === 'started' || event.type === 'resumed' || !wasLive;
  if (deadline !== undefined && live && (starts || deadline !== before.limits.deadlineAt)) {
    set.push(deadlineTimer(runId, deadline));
  } else if (before.limits.deadlineAt !== undefined && (!live || deadline === undefined)) {
    clear.push('deadline');
  }
  if (open.length + close.length + set.length + clear.length === 0) return undefined;
  return {
    ...((open.length > 0 || close.length > 0) && {
      waits: { ...(open.length > 0 && { open }), ...(close.length > 0 && { close }) },
    }),
    ...((set.length > 0 || clear.length > 0) && {
      timers: { ...(set.length > 0 && { set }), ...(clear.length > 0 && { clear }) },
    }),
  };
}

// Checked on every step, so it allocates nothing: nearly every step opens no wait and moves no
// timer, and its commit is then the one-statement fast path.
function touchesWaitsOrTimers(
  event: RunEvent,
  before: Snapshot,
  after: Snapshot,
  commands: readonly Command[],
): boolean {
  const type = event.type;
  if (type === 'answered' || type === 'failed' || type === 'started' || type === 'resumed')
    return true;
  const deadline = after.limits.deadlineAt;
  if (deadline !== before.limits.deadlineAt) return true;
  if (deadline !== undefined && after.status !== before.status) return true;
  for (let i = 0; i < commands.length; i++) {
    const command = commands[i]!.type;
    if (command === 'wait' || command === 'closeWaits' || command === 'sleep') return true;
    if (command === 'endSleeps') return true;
  }
  return false;
}
