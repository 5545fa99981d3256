import type { RunStatus } from '../../runtime/core/snapshot.js';
import type { StreamEvent } from '../../runtime/watch/stream.js';
import { watch as watchStream } from '../../runtime/watch/watch.js';
import { exitCode, exitCodeOf } from '../exit-code.js';
import type { Io } from '../io.js';
import { graphOfRun, withRunStore } from '../session.js';
import { iso } from '../time.js';

/** The flags of `waymark watch`. */
export interface WatchFlags {
  readonly graph?: string;
  readonly after?: string;
  readonly follow: boolean;
  readonly states?: boolean;
}

/**
 * `waymark watch <run-id>`: a run's stream from another terminal, from its start (or after an
 * offset), following it live to its end whoever drives it, then exiting with the run's exit
 * code. Ctrl-C stops the watching, never the run. `--no-follow`: what is recorded, then exit.
 */
export async function watchRun(out: Io, runId: string, flags: WatchFlags): Promise<number> {
  return withRunStore(out, runId, async (store) => {
    const graph = await graphOfRun(out, store, runId, flags.graph);
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    let events = 0;
    try {
      for await (const event of watchStream(store, graph, runId, {
        signal: stop.signal,
        follow: flags.follow,
        ...(flags.after !== undefined && { after: flags.after }),
        ...(flags.states === true && { states: true }),
      })) {
        events++;
        out.json({ type: 'stream-event', event: jsonOf(event) });
        out.line(describeEvent(out, event));
      }
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    const status = ((await store.getRun(runId))?.status ?? 'failed') as RunStatus;
    out.json({ type: 'watched', runId, status, events, stopped: stop.signal.aborted });
    if (stop.signal.aborted) {
      out.line(`stopped watching run ${runId}; it is ${status}, and goes on without a watcher`);
      return exitCode.succeeded;
    }
    // What is recorded of a run still going, without following it: nothing went wrong.
    if (!flags.follow && (status === 'running' || status === 'waiting'))
      return status === 'waiting' ? exitCode.waiting : exitCode.succeeded;
    return exitCodeOf(status);
  });
}

/** One stream event as a line for a person: its offset, then what happened. */
export function describeEvent(io: Io, event: StreamEvent): string {
  const { c } = io;
  const at = c.dim(`${event.offset.padEnd(7)} ${iso(event.at).slice(11, 23)}`);
  const attempt = (n: number) => (n > 1 ? c.dim(` attempt ${n}`) : '');
  switch (event.type) {
    case 'run':
      return `${at} run ${c.bold(event.status)}${event.cause === 'status' ? '' : c.dim(` (${event.cause})`)}${event.error === undefined ? '' : ` ${c.red(`${event.error.code}: ${event.error.message}`)}`}`;
    case 'activation.scheduled':
      return `${at} ${c.cyan('▶')} ${event.activation}${attempt(event.attempt)}${event.notBefore === undefined ? '' : c.dim(` not before ${iso(event.notBefore)}`)}`;
    case 'activation.completed':
      return `${at} ${c.green('✓')} ${event.activation}${attempt(event.attempt)}${event.reused ? c.dim(' reused') : ''} ${c.dim(clip(JSON.stringify(event.update ?? null)))}`;
    case 'activation.failed':
      return `${at} ${c.red('✗')} ${event.activation}${attempt(event.attempt)} ${c.red(`${event.error.code}: ${event.error.message}`)}${event.retrying ? c.dim(' (will retry)') : ''}`;
    case 'activation.paused':
      return `${at} ${c.yellow('‖')} ${event.activation} paused at a breakpoint: \`waymark resume ${event.runId}\` runs it`;
    case 'activation.cancelled':
      return `${at} ${c.yellow('■')} cancelled ${event.activations.join(', ')}`;
    case 'wait.opened':
      return `${at} ${c.yellow('?')} ${event.activation} waits: ${clip(event.prompt)} ${c.dim(`(request ${event.requestId})`)}`;
    case 'wait.answered':
      return `${at} ${c.green('!')} ${event.activation} answered ${c.dim(clip(JSON.stringify(event.answer)))}`;
    case 'wait.closed':
      return `${at} ${c.yellow('■')} closed ${event.requestIds.join(', ')}`;
    case 'join.released':
      return `${at} ${c.blue('⋈')} ${event.activation} joins ${event.join.merged.length} branch(es)`;
    case 'cap.hit':
      return `${at} ${c.red('⊘')} ${event.code}: ${event.message}`;
    case 'state.patched':
      return `${at} ${c.yellow('✎')} state patched by ${event.by} (${event.reason}) ${c.dim(clip(JSON.stringify(event.update)))}`;
    case 'custom':
      return `${at} ${c.blue('•')} ${event.activation} ${event.name} ${c.dim(clip(JSON.stringify(event.data ?? null)))}`;
    case 'delta':
      return `${at} ${c.dim('~')} ${event.activation} ${event.name} ${c.dim(clip(JSON.stringify(event.data ?? null)))}`;
    case 'heartbeat':
      return `${at} ${c.dim('♥')} ${event.activation}${attempt(event.attempt)} alive${event.details === undefined ? '' : ` ${c.dim(clip(JSON.stringify(event.details)))}`}`;
  }
}

/** A value's first line, cut to fit a line of a terminal: --json has it whole. */
function clip(text: string, max = 80): string {
  const first = text.split('\n')[0]!;
  return first.length > max || first !== text ? `${first.slice(0, max - 1)}…` : first;
}

/** A stream event as a JSON line writes it: its times as ISO strings, like every line's. */
function jsonOf(event: StreamEvent): Record<string, unknown> {
  const line: Record<string, unknown> = { ...event, at: iso(event.at) };
  if (event.type === 'custom') line.emittedAt = iso(event.emittedAt);
  if (event.type === 'activation.scheduled' && event.notBefore !== undefined)
    line.notBefore = iso(event.notBefore);
  return line;
}
