// When timed nodes started and ended, as worker processes report them on stdout (graphs.mjs
// `tell`), in CLOCK_MONOTONIC nanoseconds: the same clock in every process on the machine.

import type { Child } from './children.js';
import { told } from './graphs.mjs';

export class Timeline {
  readonly #seen = new Map<string, { ns: bigint; pid: number }>();
  readonly #waiting = new Map<string, (at: { ns: bigint; pid: number }) => void>();

  /** Reads the timed lines of these children from now on. */
  follow(children: readonly Child[]): void {
    for (const child of children) {
      child.onLine((line) => {
        const t = told(line);
        if (t === undefined) return;
        const key = `${t.runId}/${t.activation}/${t.what}`;
        const at = { ns: t.ns, pid: child.pid };
        // The first report counts: a body run again elsewhere (a takeover) reports later.
        if (this.#seen.has(key)) return;
        this.#seen.set(key, at);
        this.#waiting.get(key)?.(at);
        this.#waiting.delete(key);
      });
    }
  }

  /** When `activation` of `runId` first reported `what`, waiting up to `timeoutMs` for it. */
  at(
    runId: string,
    activation: string,
    what: 'start' | 'end',
    timeoutMs = 30_000,
  ): Promise<{ ns: bigint; pid: number }> {
    const key = `${runId}/${activation}/${what}`;
    const seen = this.#seen.get(key);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(key);
        reject(new Error(`bench: no "${what}" from ${key} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#waiting.set(key, (at) => {
        clearTimeout(timer);
        resolve(at);
      });
    });
  }

  /** Forgets what a key reported, so a body run again can be waited for. */
  forget(runId: string, activation: string, what: 'start' | 'end'): void {
    this.#seen.delete(`${runId}/${activation}/${what}`);
  }
}

/** Milliseconds from `from` to `to`, both CLOCK_MONOTONIC nanoseconds. */
export function msBetween(from: bigint, to: bigint): number {
  return Number(to - from) / 1e6;
}
