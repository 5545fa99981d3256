import type { Command } from 'commander';
import { inspect } from '../../runtime/inspect.js';
import { exitCode } from '../exit.js';
import type { Io } from '../io.js';
import { waitView } from '../report.js';
import { graphOfRun, withRunStore } from '../session.js';

export function showCommand(program: Command, io: () => Io, done: (code: number) => void) {
  program
    .command('show')
    .description('print a run: status, state, open waits, pending steps and errors')
    .argument('<run-id>')
    .option('--graph <graph-file>', 'the graph file (default: the one the run was started with)')
    .addHelpText('after', '\nExample:\n  $ waymark show 3f1c9a2e-...')
    .action(async (runId: string, flags: { graph?: string }) => {
      const out = io();
      const view = await withRunStore(out, runId, async (store) => {
        const graph = await graphOfRun(store, runId, flags.graph);
        return inspect(store, graph, runId);
      });
      const { run, snapshot, waits } = view;
      const open = waits.filter((w) => w.answer === null).map(waitView);
      const answered = waits
        .filter((w) => w.answer !== null)
        .map((w) => ({
          requestId: w.requestId,
          node: w.node,
          answer: JSON.parse(w.answer!) as unknown,
          by: w.answeredBy,
          at: new Date(w.answeredAt!).toISOString(),
        }));
      const stopError = 'error' in snapshot ? snapshot.error : undefined;
      out.json({
        type: 'run',
        id: run.id,
        graph: { name: run.graph, hash: run.graphHash, version: run.graphVersion },
        status: snapshot.status,
        createdAt: new Date(run.createdAt).toISOString(),
        updatedAt: new Date(run.updatedAt).toISOString(),
        steps: snapshot.steps,
        path: view.trace.path,
        state: snapshot.state,
        pending: snapshot.pending.map((a) => a.id),
        waits: { open, answered },
        errors: snapshot.errors,
        quarantine: snapshot.quarantine,
        spent: snapshot.spent,
        limits: snapshot.limits,
        ...(stopError && { error: stopError }),
      });
      const { c } = out;
      out.line(`run      ${c.bold(run.id)}`);
      out.line(`graph    ${run.graph} v${run.graphVersion} (${run.graphHash.slice(0, 12)})`);
      out.line(`status   ${snapshot.status} after ${snapshot.steps} step(s)`);
      out.line(`started  ${new Date(run.createdAt).toISOString()}`);
      out.line(`updated  ${new Date(run.updatedAt).toISOString()}`);
      out.line(`path     ${view.trace.path.join(' -> ')}`);
      if (snapshot.pending.length > 0)
        out.line(`pending  ${snapshot.pending.map((a) => a.id).join(', ')}`);
      if (stopError) out.line(`stopped  ${c.red(`${stopError.code}: ${stopError.message}`)}`);
      for (const w of open) {
        out.line(`waiting  ${w.node} asks "${w.prompt}" (request ${w.requestId})`);
        out.line(`         answer schema: ${JSON.stringify(w.schema)}`);
      }
      for (const a of answered) {
        out.line(`answered ${a.node} by ${a.by}: ${JSON.stringify(a.answer)}`);
      }
      out.line(`errors   ${snapshot.errors.length === 0 ? 'none' : `${snapshot.errors.length}`}`);
      for (const e of snapshot.errors) {
        out.line(`  ${e.activation} attempt ${e.attempt}: ${e.code} (${e.class}) ${e.message}`);
      }
      const { spent, quarantine } = snapshot;
      if (snapshot.limits.model !== undefined) out.line(`model    ${snapshot.limits.model}`);
      if (spent.inputTokens + spent.outputTokens > 0) {
        const cost = spent.costUsd > 0 ? `, $${spent.costUsd.toFixed(4)}` : '';
        out.line(`spent    ${spent.inputTokens} in / ${spent.outputTokens} out tokens${cost}`);
      }
      out.line(`quarantine ${quarantine.length === 0 ? 'none' : `${quarantine.length} output(s)`}`);
      for (const q of quarantine) {
        out.line(`  ${q.activation}: ${q.reasons.join(', ')}: ${JSON.stringify(q.output)}`);
      }
      out.line('state');
      for (const line of JSON.stringify(snapshot.state, null, 2).split('\n')) out.line(`  ${line}`);
      done(exitCode.succeeded);
    });
}
