import { type BoundLimits, cachedBound, overBudget } from '../../cost/budget.js';
import { describeAmounts, parseBudget } from '../../cost/budget-text.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import type { Diagnostic } from '../../graph/diagnostic.js';
import { formatDiagnostic } from '../exit.js';
import { exitCode } from '../exit-code.js';
import type { Io } from '../io.js';
import { isError, loadDeclaration } from '../load-graph.js';

/**
 * `waymark validate <graph-file> [--budget 2usd]`: every problem at once; exit 1 on an error,
 * or when the graph's worst case is above the budget.
 */
export async function validate(
  out: Io,
  file: string,
  flags: { readonly budget?: string } = {},
): Promise<number> {
  const limits = flags.budget === undefined ? undefined : parseBudget(flags.budget);
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
  if (errors.length > 0) return exitCode.failed;
  if (limits === undefined) return exitCode.succeeded;
  return withinBudget(out, declaration.graph!, limits);
}

/** The worst case against the budget: a line either way, exit 1 when it does not fit. */
function withinBudget(out: Io, graph: CompiledGraph, limits: BoundLimits): number {
  const bound = cachedBound(graph);
  const refusal = overBudget(bound, limits);
  out.json({ type: 'bound', ...bound, within: refusal === undefined });
  out.line(`worst case: ${describeAmounts(bound.total)}`);
  if (refusal === undefined) {
    out.line(`${out.c.green('✓')} within the budget`);
    return exitCode.succeeded;
  }
  out.line(`${out.c.red('✗')} ${refusal.message}`);
  return exitCode.failed;
}
