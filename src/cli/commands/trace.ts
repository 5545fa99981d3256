import type { Command } from 'commander';
import { WaymarkError } from '../../error/waymark-error.js';
import { loadTrace } from '../../runtime/history.js';
import { exitCode } from '../exit.js';
import type { Io } from '../io.js';
import { describeEntry } from '../progress.js';
import { withRunStore } from '../session.js';

export function traceCommand(program: Command, io: () => Io, done: (code: number) => void) {
  program
    .command('trace')
    .description('print the path a run took: every attempt with its duration and error')
    .argument('<run-id>')
    .addHelpText('after', '\nExample:\n  $ waymark trace 3f1c9a2e-... --json')
    .action(async (runId: string) => {
      const out = io();
      const trace = await withRunStore(out, runId, async (store) => {
        if ((await store.getRun(runId)) === undefined) {
          throw new WaymarkError('RUN_NOT_FOUND', `there is no run "${runId}" in ${store.path}`, {
            retryable: false,
          });
        }
        return loadTrace(store, runId);
      });
      out.json({ type: 'trace', runId, path: trace.path, entries: trace.entries });
      out.line(`path: ${trace.path.join(' -> ')}`);
      out.line();
      for (const entry of trace.entries) {
        out.line(`${new Date(entry.startedAt).toISOString()}  ${describeEntry(out, entry)}`);
        for (const turn of entry.turns ?? []) {
          const tools = turn.toolCalls?.length ? `, tools: ${turn.toolCalls.join(', ')}` : '';
          const usage = turn.usage
            ? `, ${turn.usage.inputTokens} in / ${turn.usage.outputTokens} out tokens`
            : '';
          out.line(`${' '.repeat(26)}  turn ${turn.turn}: ${turn.durationMs} ms${usage}${tools}`);
        }
      }
      const failed = trace.entries.filter((e) => e.status === 'failed').length;
      const used = trace.entries.flatMap((e) => (e.usage === undefined ? [] : [e.usage]));
      const tokensIn = used.reduce((n, u) => n + u.inputTokens, 0);
      const tokensOut = used.reduce((n, u) => n + u.outputTokens, 0);
      out.line();
      out.line(
        `${trace.path.length} activation(s), ${trace.entries.length} attempt(s), ${failed} failed${used.length > 0 ? `, ${tokensIn} in / ${tokensOut} out model tokens` : ''}`,
      );
      done(exitCode.succeeded);
    });
}
