import type { CompiledGraph } from '../../graph/compiled.js';
import { type Untracked, withoutUntracked } from '../../graph/untracked.js';
import type { Attempt } from '../attempt/execute.js';
import type { FanOut, RunEvent, Snapshot } from '../core/snapshot.js';

// What the store is given of a run whose graph has untracked fields: everything but them. The
// in-memory run keeps them for the rest of its drive; each writer below asks `graph.untracked`
// once and does nothing more for a graph without any.

/**
 * An event as it is recorded: the update it applied (a completion's, an answer's, a patch's,
 * a migration's state) without its untracked fields. The same event when there are none.
 *
 * @example
 * const stored = recordedEvent(graph.untracked, event);
 */
export function recordedEvent(untracked: Untracked, event: RunEvent): RunEvent {
  switch (event.type) {
    case 'completed':
    case 'answered':
    case 'patched': {
      const update = withoutUntracked(untracked, event.update);
      return update === event.update ? event : ({ ...event, update } as RunEvent);
    }
    case 'migrated': {
      const state = withoutUntracked(untracked, event.state);
      return state === event.state ? event : { ...event, state };
    }
    default:
      return event;
  }
}

/**
 * A snapshot as it is recorded: its state and its branches' updates without untracked fields.
 *
 * @example
 * const stored = recordedSnapshot(graph.untracked, snapshot);
 */
export function recordedSnapshot(untracked: Untracked, snapshot: Snapshot): Snapshot {
  let fanOuts = snapshot.fanOuts;
  for (const [id, fanOut] of Object.entries(snapshot.fanOuts)) {
    const branches = fanOut.branches.map((b) => {
      const updates = b.updates.map((u) => withoutUntracked(untracked, u));
      return updates.some((u, i) => u !== b.updates[i]) ? { ...b, updates } : b;
    });
    if (branches.some((b, i) => b !== fanOut.branches[i])) {
      if (fanOuts === snapshot.fanOuts) fanOuts = { ...fanOuts };
      (fanOuts as Record<string, FanOut>)[id] = { ...fanOut, branches };
    }
  }
  return { ...snapshot, state: withoutUntracked(untracked, snapshot.state), fanOuts };
}

/**
 * An attempt's result as a worker stores it (in its run's inbox) and folds it: without the
 * untracked fields of its update, since a worker's step starts them from their defaults.
 *
 * @example
 * const kept = recordedAttempt(graph, attempt);
 */
export function recordedAttempt(graph: CompiledGraph, attempt: Attempt): Attempt {
  const untracked = graph.untracked;
  if (untracked === undefined) return attempt;
  const event = recordedEvent(untracked, attempt.event) as Attempt['event'];
  return event === attempt.event ? attempt : { ...attempt, event };
}
