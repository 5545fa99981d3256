import type { Command } from 'commander';
import { exitCode, formatDiagnostic } from '../exit.js';
import type { Io } from '../io.js';
import { isError, loadDeclaration } from '../load-graph.js';

export function validateCommand(program: Command, io: () => Io, done: (code: number) => void) {
  program
    .command('validate')
    .description(
      'compile a graph file and print every problem in it: exit 1 on an error, 0 with only warnings',
    )
    .argument('<graph-file>', 'a .ts or .js module whose default export is a graph')
    .addHelpText('after', '\nExample:\n  $ waymark validate examples/changelog-post/graph.ts')
    .action(async (file: string) => {
      const out = io();
      const declaration = await loadDeclaration(file);
      const { def } = declaration;
      const name = def?.name ?? file;
      // Every diagnostic says its severity, also one from a copy of waymark that had none.
      const diagnostics = declaration.diagnostics.map((d) =>
        d.severity === undefined ? { ...d, severity: 'error' as const } : d,
      );
      const errors = diagnostics.filter(isError);
      const warnings = diagnostics.filter((d) => !isError(d));
      out.json({
        type: 'validation',
        file: declaration.path,
        graph: name,
        valid: errors.length === 0,
        ...(def && { nodes: def.nodes.length }),
        ...(declaration.graph && { hash: declaration.graph.hash }),
        diagnostics,
      });
      if (errors.length > 0) {
        out.line(`${out.c.red('✗')} graph "${name}" has ${errors.length} problem(s):`);
        for (const d of errors) out.line(formatDiagnostic(out, d));
      } else {
        const g = declaration.graph!;
        out.line(
          `${out.c.green('✓')} graph "${g.name}" v${g.version} is valid: ${g.def.nodes.length} nodes, ${g.def.edges.length + g.def.routes.length} edges and routes, hash ${g.hash.slice(0, 12)}`,
        );
      }
      // Warnings never fail the command: the graph compiles and runs as it is.
      if (warnings.length > 0) {
        out.line(`${out.c.yellow('!')} ${warnings.length} warning(s):`);
        for (const d of warnings) out.line(formatDiagnostic(out, d));
      }
      done(errors.length > 0 ? exitCode.failed : exitCode.succeeded);
    });
}
