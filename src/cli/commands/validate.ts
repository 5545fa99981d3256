import type { Diagnostic } from '../../graph/diagnostic.js';
import { formatDiagnostic } from '../exit.js';
import { exitCode } from '../exit-code.js';
import type { Io } from '../io.js';
import { isError, loadDeclaration } from '../load-graph.js';

/** `waymark validate <graph-file>`: every problem at once; exit 1 on an error. */
export async function validate(out: Io, file: string): Promise<number> {
  out.about.graphFile = file;
  const declaration = await loadDeclaration(file);
  const { def } = declaration;
  const name = def?.name ?? file;
  // Every diagnostic says its severity, also one from a copy of waymark that had none.
  const diagnostics = declaration.diagnostics.map(
    (d): Diagnostic => (d.severity === undefined ? { ...d, severity: 'error' as const } : d),
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
  return errors.length > 0 ? exitCode.failed : exitCode.succeeded;
}
