import type { MemoRecord } from '../store.js';

/** The memos of a memory store: node outputs recorded for reuse, the newest found first. */
export class MemoryMemos {
  readonly #memos: MemoRecord[] = [];

  put(memo: MemoRecord): void {
    this.#memos.push(memo);
  }

  find(
    graph: string,
    node: string,
    nodeVersion: number,
    inputHash: string,
  ): MemoRecord | undefined {
    return this.#memos.findLast(
      (m) =>
        m.graph === graph &&
        m.node === node &&
        m.nodeVersion === nodeVersion &&
        m.inputHash === inputHash,
    );
  }

  clear(graph: string, node?: string): number {
    const before = this.#memos.length;
    const kept = this.#memos.filter(
      (m) => m.graph !== graph || (node !== undefined && m.node !== node),
    );
    this.#memos.splice(0, before, ...kept);
    return before - kept.length;
  }

  /** Forgets the memos a run recorded (it is deleted). */
  forget(runId: string): void {
    const kept = this.#memos.filter((m) => m.runId !== runId);
    this.#memos.splice(0, this.#memos.length, ...kept);
  }
}
