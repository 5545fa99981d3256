import type { Command } from 'commander';
import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import { rewind } from '../../runtime/rewind.js';
import type { Io } from '../io.js';
import { withProgress } from '../progress.js';
import { reportRun } from '../report.js';
import { graphOfRun, withRunStore } from '../session.js';

interface RewindFlags {
  readonly to: string;
  readonly note?: string;
  readonly noteField: string;
  readonly runId?: string;
  readonly graph?: string;
}

export function rewindCommand(program: Command, io: () => Io, done: (code: number) => void) {
  program
    .command('rewind')
    .description('start a new run from the checkpoint before a node, reusing unchanged steps')
    .argument('<run-id>', 'the run to rewind; it is left as it was')
    .requiredOption('--to <node>', 'the node to run again')
    .option('--note <text>', 'a note added to the state there (see --note-field)')
    .option('--note-field <field>', 'the state field the note goes into', 'notes')
    .option('--run-id <id>', 'the new run id (default: a fresh UUID)')
    .option('--graph <graph-file>', 'the graph file (default: the one the run was started with)')
    .addHelpText(
      'after',
      `
The note goes into the state field --note-field (default "notes") through its reducer: a list
field gets the note appended, a text field is set to it. Every step after the rewind point whose
inputs did not change reads its recorded output back instead of running.

Example:
  $ waymark rewind 3f1c9a2e-... --to draft --note "the second section misstates the pricing change"`,
    )
    .action(async (runId: string, flags: RewindFlags) => {
      const out = io();
      done(
        await withRunStore(out, runId, async (store) => {
          const graph = await graphOfRun(store, runId, flags.graph);
          const update = flags.note === undefined ? undefined : noteUpdate(graph, flags);
          out.line(`rewinding ${runId} to ${flags.to}, as a new run`);
          const result = await withProgress(out, (live) =>
            rewind(store, graph, runId, {
              to: flags.to,
              ...(flags.runId !== undefined && { runId: flags.runId }),
              ...(update !== undefined && { update }),
              ...live,
            }),
          );
          return reportRun(out, store, result);
        }),
      );
    });
}

/** The note as an update of its field: a list gets it as one item, anything else the text. */
function noteUpdate(graph: CompiledGraph, flags: RewindFlags): Record<string, unknown> {
  const schema = graph.fieldSchemas.get(flags.noteField);
  if (schema === undefined) {
    throw new WaymarkError(
      'USAGE_INVALID',
      `graph "${graph.name}" has no state field "${flags.noteField}" for the note; name one with --note-field (fields: ${graph.def.fields.join(', ')})`,
      { retryable: false },
    );
  }
  const asList = schema.safeParse([flags.note]).success;
  return { [flags.noteField]: asList ? [flags.note] : flags.note };
}
