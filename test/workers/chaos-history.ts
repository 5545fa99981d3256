import { readFileSync } from 'node:fs';
import type { CompiledGraph, Store } from '../../src/index.js';
import { checkHistory, type ExecutionRecord, type HistoryReport } from '../../src/testing/index.js';

/**
 * The history checker (waymark/testing, docs/testing.md) over a chaos or soak store: the bodies
 * the workers logged (`run activation attempt pid start-ms` a line, chaos-graphs.mjs) and what
 * the effect receiver applied (the first receipt per key), with the graphs to replay every run.
 */
export async function checkChaosHistory(
  store: Store,
  logFile: string,
  received: ReadonlyMap<string, { readonly receipt: string }>,
  graphs: readonly CompiledGraph[],
): Promise<HistoryReport> {
  const log: ExecutionRecord[] = [];
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    const [runId, activation, attempt, holder, at] = line.split(' ');
    // A worker killed as it wrote leaves its last line torn: that body's start is unknown.
    if (at === undefined || !Number.isFinite(Number(at))) continue;
    log.push({
      type: 'attempt',
      runId: runId!,
      activation: activation!,
      attempt: Number(attempt),
      holder: holder!,
      at: Number(at),
    });
  }
  for (const [key, { receipt }] of received)
    log.push({ type: 'effect', key, result: JSON.stringify(receipt), at: 0 });
  return checkHistory(store, { log, graphs });
}
