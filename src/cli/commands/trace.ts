import { WaymarkError } from '../../error/waymark-error.js';
import { loadTrace } from '../../runtime/ops/history.js';
import type { Trace, TraceEntry } from '../../runtime/watch/trace.js';
import { nestTrace, type TraceNode } from '../../runtime/watch/trace-tree.js';
import { exitCode } from '../exit-code.js';
import type { Io } from '../io.js';
import { describeEntry } from '../progress.js';
import type { CliStore } from '../session.js';
import { whereIs, withRunStore } from '../session.js';
import { iso } from '../time.js';
import { provenanceLines } from './show.js';

/** `waymark trace <run-id>`: every attempt, read from the history alone. */
export async function trace(out: Io, runId: string): Promise<number> {
  const { path, entries } = await withRunStore(out, runId, (store) => history(store, runId));
  out.json({
    type: 'trace',
    runId,
    path,
    entries: entries.map((entry) => ({
      ...entry,
      startedAt: iso(entry.startedAt),
      ...(entry.heartbeat !== undefined && {
        heartbeat: { ...entry.heartbeat, at: iso(entry.heartbeat.at) },
      }),
    })),
  });
  out.line(`path: ${path.join(' -> ')}`);
  out.line();
  // A subgraph's entries are indented under a line for the step that entered it.
  const print = (nodes: readonly TraceNode[], depth: number) => {
    const indent = '  '.repeat(depth);
    for (const node of nodes) {
      if (node.kind === 'attempt') printEntry(out, node.entry, indent);
      else {
        out.line(`${' '.repeat(26)}${indent}▸ ${node.activation} (subgraph ${node.node})`);
        print(node.children, depth + 1);
      }
    }
  };
  print(nestTrace(entries), 0);
  const failed = entries.filter((e) => e.status === 'failed').length;
  const used = entries.flatMap((e) => (e.usage === undefined ? [] : [e.usage]));
  const tokensIn = used.reduce((n, u) => n + u.inputTokens, 0);
  const tokensOut = used.reduce((n, u) => n + u.outputTokens, 0);
  out.line();
  out.line(
    `${path.length} activation(s), ${entries.length} attempt(s), ${failed} failed${used.length > 0 ? `, ${tokensIn} in / ${tokensOut} out model tokens` : ''}`,
  );
  return exitCode.succeeded;
}

function printEntry(out: Io, entry: TraceEntry, indent: string): void {
  out.line(`${iso(entry.startedAt)}  ${indent}${describeEntry(out, entry)}`);
  for (const turn of entry.turns ?? []) {
    const tools = turn.toolCalls?.length ? `, tools: ${turn.toolCalls.join(', ')}` : '';
    const usage = turn.usage
      ? `, ${turn.usage.inputTokens} in / ${turn.usage.outputTokens} out tokens`
      : '';
    out.line(
      `${' '.repeat(26)}  ${indent}turn ${turn.turn}: ${turn.durationMs} ms${usage}${tools}`,
    );
  }
  if (entry.error === undefined) return;
  for (const line of provenanceLines(entry.error, out.flags.verbose)) {
    out.line(`${' '.repeat(28)}${indent}${line}`);
  }
}

/** The run's whole history, read once; refused for a run the store does not hold. */
async function history(store: CliStore, runId: string): Promise<Trace> {
  if ((await store.getRun(runId)) === undefined) {
    throw new WaymarkError('RUN_NOT_FOUND', `there is no run "${runId}" in ${whereIs(store)}`, {
      retryable: false,
    });
  }
  return loadTrace(store, runId);
}
