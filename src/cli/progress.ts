import ora, { type Ora } from 'ora';
import type { AttemptStart, RunResult } from '../runtime/run-types.js';
import type { TraceEntry } from '../runtime/trace.js';
import type { Io } from './io.js';

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
export function progress(io: Io): ProgressHooks {
  const running = new Map<string, AttemptStart>();
  // A terminal that reports no width (some CI pseudo-terminals) makes the spinner's line
  // arithmetic divide by zero and flood the screen: such terminals get plain lines.
  const width = io.stdout.columns ?? 0;
  const spinner: Ora | undefined =
    io.tty && !io.flags.quiet && width > 0
      ? ora({ stream: io.stdout, discardStdin: false })
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
      io.json({ type: 'attempt-started', ...attempt });
      print(
        `${c.cyan('▶')} ${attempt.activation}${attempt.attempt > 1 ? c.dim(` attempt ${attempt.attempt}`) : ''}`,
      );
      refresh();
    },
    onTraceEntry(entry) {
      running.delete(entry.activation);
      io.json({ type: 'attempt-ended', ...entry });
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
export type LiveOptions = Pick<ProgressHooks, 'onAttemptStart' | 'onTraceEntry'>;

/**
 * Runs a call that moves a run (run, resume, rewind) with live progress, and stops the spinner
 * whatever happens: the caller reports the result.
 */
export async function withProgress(
  io: Io,
  move: (live: LiveOptions) => Promise<RunResult>,
): Promise<RunResult> {
  const hooks = progress(io);
  try {
    return await move({ onAttemptStart: hooks.onAttemptStart, onTraceEntry: hooks.onTraceEntry });
  } finally {
    hooks.stop();
  }
}
