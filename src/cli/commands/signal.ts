import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import { listSignals, signal as sendSignal } from '../../runtime/ops/signal.js';
import type { SignalRecord } from '../../store/signal-store.js';
import { exitCode } from '../exit-code.js';
import type { Io } from '../io.js';
import { commandLine } from '../next.js';
import { graphOfRun, parseJson, withExistingStore, withRunStore, withStore } from '../session.js';
import { iso } from '../time.js';
import { resumeRun } from './run.js';

interface SignalFlags {
  readonly id?: string;
  readonly graph?: string;
  readonly key?: string;
  readonly resume: boolean;
}

/**
 * `waymark signal <run-id> <name> [payload-json]`, or with `--graph <file> --key <key>`:
 * `waymark signal <name> [payload-json]`. Sends the signal; one delivered to a run that waits
 * is continued here, as `waymark answer` does.
 */
export async function signal(
  out: Io,
  first: string,
  second: string | undefined,
  third: string | undefined,
  flags: SignalFlags,
): Promise<number> {
  if (flags.key !== undefined) {
    if (flags.graph === undefined || third !== undefined) {
      throw usage('with --key, name the graph file with --graph and give: <name> [payload-json]');
    }
    const { loadGraph } = await import('../load-graph.js');
    const graph = (await loadGraph(flags.graph)).graph;
    const payload = second === undefined ? {} : parseJson(second, 'payload-json');
    const target = { graph, key: flags.key };
    return withStore(out, 'create', async (store) => {
      const sent = await sendSignal(store, target, first, payload, idOf(flags));
      return told(out, sent.outcome, sent.signal, flags, async (runId) =>
        resumeRun(out, store, graph, runId),
      );
    });
  }
  if (second === undefined) throw usage('give the run id and the signal name: <run-id> <name>');
  const payload = third === undefined ? {} : parseJson(third, 'payload-json');
  return withRunStore(out, first, async (store) => {
    const graph = await graphOfRun(out, store, first, flags.graph);
    const sent = await sendSignal(store, first, second, payload, {
      ...idOf(flags),
      graph: graph as CompiledGraph<never, never>,
    });
    return told(out, sent.outcome, sent.signal, flags, (runId) =>
      resumeRun(out, store, graph, runId),
    );
  });
}

/** `waymark signals`: the signals kept for a run that has not reached its event yet. */
export async function signals(out: Io, flags: { readonly all: boolean }): Promise<number> {
  const found = await withExistingStore(out, (store) =>
    listSignals(store, flags.all ? {} : { state: 'kept' }),
  );
  const list = found?.value ?? [];
  out.json({ type: 'signals', signals: list.map(signalView) });
  if (list.length === 0) out.line(flags.all ? 'no signals' : 'no signals kept');
  for (const s of list) {
    const to = s.runId === null ? `${s.graph} key ${s.key}` : `run ${s.runId}`;
    const state =
      s.consumedAt === null ? `kept until ${iso(s.expiresAt)}` : `taken by ${s.consumedRun}`;
    out.line(`${s.id}  ${s.name} to ${to}  ${state}`);
  }
  return exitCode.succeeded;
}

async function told(
  out: Io,
  outcome: 'delivered' | 'kept' | 'duplicate',
  sent: SignalRecord,
  flags: SignalFlags,
  resume: (runId: string) => Promise<number>,
): Promise<number> {
  out.json({ type: 'signal', outcome, signal: signalView(sent) });
  if (outcome === 'duplicate') {
    out.line(`signal ${sent.id} was sent already: nothing changed`);
    return exitCode.succeeded;
  }
  if (outcome === 'kept') {
    out.line(
      `kept signal ${sent.id} (${sent.name}) until ${iso(sent.expiresAt)}: no run waits for it yet`,
    );
    return exitCode.succeeded;
  }
  const runId = sent.consumedRun!;
  out.line(`delivered signal ${sent.id} (${sent.name}) to run ${runId}`);
  if (!flags.resume) {
    out.line(out.c.dim(`next: ${commandLine(out, ['resume', runId])}`));
    return exitCode.succeeded;
  }
  return resume(runId);
}

/** A signal as the JSON lines print it: its payload parsed, its times as ISO strings. */
export function signalView(s: SignalRecord) {
  return {
    id: s.id,
    graph: s.graph,
    runId: s.runId,
    key: s.key,
    name: s.name,
    payload: JSON.parse(s.payload) as unknown,
    sentAt: iso(s.sentAt),
    expiresAt: iso(s.expiresAt),
    consumedRun: s.consumedRun,
    consumedAt: s.consumedAt === null ? null : iso(s.consumedAt),
  };
}

function idOf(flags: SignalFlags): { id?: string } {
  return flags.id === undefined ? {} : { id: flags.id };
}

function usage(message: string): WaymarkError {
  return new WaymarkError('USAGE_INVALID', `waymark signal: ${message}`, { retryable: false });
}
