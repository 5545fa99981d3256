import type { StreamEvent } from '../runtime/watch/stream.js';

/**
 * The ephemeral events (`delta`, `heartbeat`) of the runs this server drives, for the SSE clients of each:
 * they are told once, live, and never recorded, so a client reading the run's history gets
 * them only from here, and only while the server's own process runs the node.
 */
export class LiveEvents {
  readonly #listeners = new Map<string, Set<(event: StreamEvent) => void>>();

  /** Tells the run's listeners of an event. */
  publish(event: StreamEvent): void {
    const listeners = this.#listeners.get(event.runId);
    if (listeners === undefined) return;
    for (const listen of [...listeners]) listen(event);
  }

  /** Listens to a run's events; the function returned stops it. */
  subscribe(runId: string, listen: (event: StreamEvent) => void): () => void {
    let listeners = this.#listeners.get(runId);
    if (listeners === undefined) {
      listeners = new Set();
      this.#listeners.set(runId, listeners);
    }
    listeners.add(listen);
    return () => {
      listeners.delete(listen);
      if (listeners.size === 0) this.#listeners.delete(runId);
    };
  }
}
