import type { Command } from 'commander';
import { exitCode, formatDiagnostic } from '../exit.js';
import type { Io } from '../io.js';
import { loadDeclaration } from '../load-graph.js';

export function validateCommand(program: Command, io: () => Io, done: (code: number) => void) {
  program
    .command('validate')
    .description('compile a graph file and print every problem in it (exit 1 if there is any)')
    .argument('<graph-file>', 'a .ts or .js module whose default export is a graph')
    .addHelpText('after', '\nExample:\n  $ waymark validate examples/changelog-post/graph.ts')
    .action(async (file: string) => {
      const out = io();
      const declaration = await loadDeclaration(file);
      const { def, diagnostics } = declaration;
      const name = def?.name ?? file;
      out.json({
        type: 'validation',
        file: declaration.path,
        graph: name,
        valid: diagnostics.length === 0,
        ...(def && { nodes: def.nodes.length }),
        ...(declaration.graph && { hash: declaration.graph.hash }),
        diagnostics,
      });
      if (diagnostics.length > 0) {
        out.line(`${out.c.red('✗')} graph "${name}" has ${diagnostics.length} problem(s):`);
        for (const d of diagnostics) out.line(formatDiagnostic(out, d));
        return done(exitCode.failed);
      }
      const g = declaration.graph!;
      out.line(
        `${out.c.green('✓')} graph "${g.name}" v${g.version} is valid: ${g.def.nodes.length} nodes, ${g.def.edges.length + g.def.routes.length} edges and routes, hash ${g.hash.slice(0, 12)}`,
      );
      done(exitCode.succeeded);
    });
}
