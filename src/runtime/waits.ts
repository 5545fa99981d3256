import { errorValue } from '../error/error-value.js';
import type { CompiledGraph } from '../graph/compiled.js';
import type { Store } from '../store/store.js';
import type { Activation, RunEvent, Snapshot } from './core/snapshot.js';

/** What is stored about a wait beside its request id: enough for `answer()` to check an answer. */
export interface WaitRequest {
  readonly prompt: string;
  /** JSON Schema of the answer, or null when the schema has none (answer() then needs the graph). */
  readonly schema: unknown;
  readonly timeoutMs: number | null;
}

/** Records the wait of a person node's activation; re-recording keeps the first record. */
export async function recordWait(
  store: Store,
  graph: CompiledGraph,
  runId: string,
  activation: Activation,
  openedAt: number,
): Promise<void> {
  const wait = activation.waiting!;
  const spec = graph.nodes.get(activation.node)!.wait!;
  const request: WaitRequest = {
    prompt: wait.prompt,
    schema: spec.schema,
    timeoutMs: spec.timeoutMs ?? null,
  };
  await store.openWait({
    runId,
    requestId: wait.requestId,
    node: activation.node,
    activation: activation.id,
    request: JSON.stringify(request),
    openedAt,
    answer: null,
    answeredBy: null,
    answeredAt: null,
  });
}

/**
 * The events a resume owes the waits of a run: an answer for each answered wait, a timeout
 * error for each wait past its `timeoutMs`. Waits missing from the store (a crash between the
 * commit and the record) are recorded again.
 */
export async function waitEvents(
  store: Store,
  graph: CompiledGraph,
  snapshot: Snapshot,
  now: number,
): Promise<RunEvent[]> {
  const waiting = snapshot.pending.filter((a) => a.waiting !== undefined);
  if (waiting.length === 0) return [];
  const records = new Map((await store.listWaits(snapshot.runId)).map((w) => [w.requestId, w]));
  const events: RunEvent[] = [];
  for (const activation of waiting) {
    const record = records.get(activation.waiting!.requestId);
    if (record === undefined) {
      await recordWait(store, graph, snapshot.runId, activation, now);
      continue;
    }
    if (record.answer !== null) {
      events.push({
        type: 'answered',
        activation: activation.id,
        answer: JSON.parse(record.answer),
      });
      continue;
    }
    const timeoutMs = graph.nodes.get(activation.node)?.wait?.timeoutMs;
    if (timeoutMs !== undefined && now - record.openedAt > timeoutMs) {
      const where = {
        node: activation.node,
        activation: activation.id,
        attempt: activation.attempt,
      };
      const message = `nobody answered "${activation.node}" within ${timeoutMs} ms`;
      events.push({
        type: 'failed',
        activation: activation.id,
        error: errorValue(where, 'WAIT_TIMEOUT', 'timeout', message),
      });
    }
  }
  return events;
}
