import type { Ora } from 'ora';
import { isWaymarkError } from '../error/waymark-error.js';
import type { AttemptStart, RunResult } from '../runtime/run-types.js';
import type { Telemetry } from '../runtime/watch/telemetry.js';
import type { TraceEntry } from '../runtime/watch/trace.js';
import { cliTelemetry } from './cli-telemetry.js';
import type { Io } from './io.js';
import { commandLine } from './next.js';
import { iso } from './time.js';

/** The run options a progress display plugs into. */
export interface ProgressHooks {
  readonly onAttemptStart: (attempt: AttemptStart) => void;
  readonly onTraceEntry: (entry: TraceEntry) => void;
  /** Stops the spinner; call once the run returned or threw. */
  stop(): void;
}

/**
 * Live progress of a run: one line as each attempt starts and one as it ends (node, attempt,
 * duration, error). On a terminal a spinner names the nodes still running; in a pipe, or with
 * --json (one JSON event per line), there are plain lines only. --quiet shows nothing.
 */
export async function progress(io: Io): Promise<ProgressHooks> {
  const running = new Map<string, AttemptStart>();
  // A terminal that reports no width (some CI pseudo-terminals) makes the spinner's line
  // arithmetic divide by zero and flood the screen: such terminals get plain lines.
  const width = io.stdout.columns ?? 0;
  // ora (and what it loads) only for a person at a terminal: a pipe or a script never pays for it.
  const spinner: Ora | undefined =
    io.tty && !io.flags.quiet && width > 0
      ? (await import('ora')).default({ stream: io.stdout, discardStdin: false })
      : undefined;
  const { c } = io;

  const refresh = () => {
    if (spinner === undefined) return;
    if (running.size === 0) {
      spinner.stop();
      return;
    }
    spinner.text = `running ${[...running.values()].map((a) => a.activation).join(', ')}`;
    if (!spinner.isSpinning) spinner.start();
  };
  // Lines go above the spinner: clear it, write, draw it again.
  const print = (text: string) => {
    spinner?.clear();
    io.line(text);
    spinner?.render();
  };

  return {
    onAttemptStart(attempt) {
      running.set(attempt.activation, attempt);
      io.json({ type: 'attempt-started', ...attempt, startedAt: iso(attempt.startedAt) });
      print(
        `${c.cyan('▶')} ${attempt.activation}${attempt.attempt > 1 ? c.dim(` attempt ${attempt.attempt}`) : ''}`,
      );
      refresh();
    },
    onTraceEntry(entry) {
      running.delete(entry.activation);
      io.json({
        type: 'attempt-ended',
        ...entry,
        startedAt: iso(entry.startedAt),
        ...(entry.heartbeat !== undefined && {
          heartbeat: { ...entry.heartbeat, at: iso(entry.heartbeat.at) },
        }),
      });
      print(describeEntry(io, entry));
      refresh();
    },
    stop() {
      spinner?.stop();
    },
  };
}

/** One ended attempt as a line: mark, activation, attempt, duration, then what went wrong. */
export function describeEntry(io: Io, entry: TraceEntry): string {
  const { c } = io;
  const attempt = entry.attempt > 1 ? ` attempt ${entry.attempt}` : '';
  const took = c.dim(`${entry.durationMs} ms${tokens(entry)}`);
  if (entry.reused)
    return `${c.blue('↺')} ${entry.activation} ${c.dim('reused from an earlier run')}`;
  switch (entry.status) {
    case 'succeeded':
      return `${c.green('✓')} ${entry.activation}${attempt} ${took}`;
    case 'cancelled':
      return `${c.yellow('■')} ${entry.activation}${attempt} ${took} ${c.yellow('cancelled')}`;
    case 'failed': {
      const error = entry.error ? `${entry.error.code}: ${entry.error.message}` : 'failed';
      const next = entry.retried ? c.dim(' (will retry)') : '';
      return `${c.red('✗')} ${entry.activation}${attempt} ${took} ${c.red(error)}${next}`;
    }
  }
}

/** Model usage of an attempt, when a model node reported it: tokens in and out, turns, model. */
function tokens(entry: TraceEntry): string {
  const { usage, turns } = entry;
  if (usage === undefined) return '';
  const parts = [`${usage.inputTokens} in / ${usage.outputTokens} out tokens`];
  if (turns !== undefined) parts.push(`${turns.length} turn(s)`);
  if (usage.costUsd !== undefined) parts.push(`$${usage.costUsd.toFixed(4)}`);
  if (usage.model !== undefined) parts.push(usage.model);
  return `, ${parts.join(', ')}`;
}

/** The run options a command passes on so its run shows live progress. */
export type LiveOptions = Pick<ProgressHooks, 'onAttemptStart' | 'onTraceEntry'> & {
  /** OpenTelemetry spans, with WAYMARK_OTEL=1 (cli-telemetry.ts). */
  readonly telemetry?: Telemetry;
  /** Aborted by Ctrl-C or SIGTERM: the run is given back unfinished, resumable (`RUN_DRAINED`). */
  readonly drain: AbortSignal;
  readonly drainGraceMs: number;
};

/**
 * How long a node running when Ctrl-C comes may take to finish and be recorded: none, Ctrl-C
 * means now (a server's SIGTERM gives its runs a grace: server.md).
 */
const interruptGraceMs = 0;

/**
 * Runs a call that moves run `runId` (run, resume, answer, rewind) with live progress, and
 * stops the spinner whatever happens: the caller reports the result. `announce` says that a
 * new run started. Ctrl-C (or SIGTERM) is not a cancel: the run is given back (drained, its
 * lease let go), then the process dies of the signal, after saying that the run keeps every
 * completed step and which command continues it.
 */
export async function withProgress(
  io: Io,
  runId: string,
  move: (live: LiveOptions) => Promise<RunResult>,
  announce?: () => void,
): Promise<RunResult> {
  const telemetry = await cliTelemetry(io);
  const hooks = await progress(io);
  // A new run is announced as its first step starts (or is read back): a run the runtime
  // refuses to start (bad input, a taken id, a rewind to nowhere) is never announced.
  let announced = announce === undefined;
  const started = () => {
    if (announced) return;
    announced = true;
    announce?.();
  };
  const drain = new AbortController();
  let caught: NodeJS.Signals | undefined;
  // Ctrl-C (or SIGTERM) gives the run back: the nodes running are stopped, nothing new starts,
  // and the run's lease is let go at once, for the next command on any host. A second signal
  // does not wait for that.
  const interrupted = (signal: NodeJS.Signals) => {
    if (caught !== undefined) {
      for (const s of signals) process.removeListener(s, interrupted);
      process.kill(process.pid, signal);
      return;
    }
    caught = signal;
    hooks.stop();
    drain.abort();
  };
  const givenBack = (signal: NodeJS.Signals) => {
    const next = commandLine(io, ['resume', runId]);
    if (io.flags.json) io.json({ type: 'interrupted', runId, signal, next });
    else {
      io.error(
        `\n${signal === 'SIGINT' ? 'interrupted (Ctrl-C)' : `stopped by ${signal}`}: run ${runId} is not cancelled; every completed step is checkpointed and it can be resumed`,
      );
      io.error(`next:        ${next}`);
    }
    for (const s of signals) process.removeListener(s, interrupted);
    // Dies of the signal, as an interrupted program does (exit status 130 for Ctrl-C).
    process.kill(process.pid, signal);
  };
  for (const s of signals) process.on(s, interrupted);
  try {
    let result: RunResult;
    try {
      result = await move({
        ...(telemetry !== undefined && { telemetry }),
        drain: drain.signal,
        drainGraceMs: interruptGraceMs,
        onAttemptStart: (attempt) => {
          started();
          hooks.onAttemptStart(attempt);
        },
        onTraceEntry: (entry) => {
          started();
          hooks.onTraceEntry(entry);
        },
      });
    } catch (error) {
      if (caught !== undefined && isWaymarkError(error) && error.code === 'RUN_DRAINED') {
        givenBack(caught);
        // The signal ends the process; nothing after this runs.
        await new Promise(() => {});
      }
      throw error;
    }
    started();
    return result;
  } finally {
    for (const s of signals) process.removeListener(s, interrupted);
    hooks.stop();
  }
}

const signals: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];
