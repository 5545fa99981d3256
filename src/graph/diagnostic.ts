/**
 * Every stable code of a compile-time diagnostic, one section each in docs/diagnostics.md.
 * Codes are part of the public contract: renaming one is a breaking change.
 *
 * @example
 * for (const code of diagnosticCodes) console.log(code); // ENTRY_MISSING, ENTRY_UNKNOWN, ...
 */
export const diagnosticCodes = [
  'ENTRY_MISSING',
  'ENTRY_UNKNOWN',
  'NAME_INVALID',
  'NAME_DUPLICATE',
  'NAME_RESERVED',
  'EDGE_SOURCE_UNKNOWN',
  'EDGE_TARGET_UNKNOWN',
  'EDGE_MULTIPLE',
  'EDGE_AND_ROUTE',
  'ROUTE_SOURCE_UNKNOWN',
  'ROUTE_TARGET_UNKNOWN',
  'ROUTE_NO_TARGETS',
  'ROUTE_DUPLICATE',
  'ON_ERROR_UNKNOWN',
  'DEAD_END',
  'UNREACHABLE',
  'TRAP',
  'CYCLE_UNCAPPED',
  'FIELD_UNKNOWN',
  'OPTION_INVALID',
  'FANOUT_NODE_UNKNOWN',
  'FANOUT_EMPTY',
  'FANOUT_CONFLICT',
  'FANOUT_JOIN_UNREACHABLE',
  'BRANCH_ESCAPES',
  'BRANCH_ENTERED',
  'ON_ERROR_TO_JOIN',
  'JOIN_WITHOUT_FANOUT',
  'JOIN_SHARED',
  'QUORUM_TOO_LARGE',
  'WRITE_CONFLICT',
  'READS_UNDECLARED',
  'WRITES_UNDECLARED',
  'ANSWER_UNMAPPED',
  'UNTRACKED_INVALID',
  'UNTRACKED_ACROSS_WAIT',
] as const;

/** A stable code of a compile-time diagnostic. */
export type DiagnosticCode = (typeof diagnosticCodes)[number];

/**
 * How a diagnostic weighs: an `error` makes `.compile()` throw; a `warning` is reported by
 * `validate()` and `waymark validate` but never stops a graph from compiling.
 *
 * @example
 * const errors = builder.validate().filter((d) => d.severity === 'error');
 */
export type Severity = 'error' | 'warning';

/**
 * The codes that are warnings; every other code is an error.
 *
 * @example
 * const errors = diagnostics.filter((d) => !warningCodes.has(d.code));
 */
export const warningCodes: ReadonlySet<DiagnosticCode> = new Set<DiagnosticCode>([
  'READS_UNDECLARED',
  'WRITES_UNDECLARED',
  'UNTRACKED_ACROSS_WAIT',
]);

/**
 * Facts a diagnostic carries besides its message, for tools that act on it (an editor offering
 * the suggested name, the CLI's `--json`). Each field is set only by the codes that say so in
 * docs/diagnostics.md.
 *
 * @example
 * { suggestion: 'plan-fix', unreachable: ['plan-fix', 'fix-code', 'update-tests', 'merge'] }
 */
export interface DiagnosticDetails {
  /** The declared node (or, for `ANSWER_UNMAPPED`, state field) closest to an unknown name. */
  readonly suggestion?: string;
  /** The nodes that cannot be reached only because of this mistake, in declaration order. */
  readonly unreachable?: readonly string[];
  /** How the edge is declared: a static edge, a router target, an onError route, a fan-out. */
  readonly via?: 'edge' | 'route' | 'onError' | 'fanOut' | 'entry';
  /** The node that starts the fan-out the diagnostic is about. */
  readonly fanOut?: string;
  /** The join node of that fan-out. */
  readonly join?: string;
}

/**
 * One problem found in a graph declaration, as data. `node` and `edge` say where; `hint` is the
 * one-line fix; `details`, when present, holds the facts a tool may act on.
 *
 * @example
 * { code: 'DEAD_END', severity: 'error', node: 'verify', message: 'node "verify" has no way out', hint: '...' }
 */
export interface Diagnostic {
  readonly code: DiagnosticCode;
  readonly severity: Severity;
  readonly message: string;
  readonly hint: string;
  readonly node?: string;
  readonly edge?: { readonly from: string; readonly to: string };
  readonly details?: DiagnosticDetails;
}

/**
 * How the validator's checks add a diagnostic. The hint comes from the code, unless `where`
 * gives one that names this case's fix (the suggested name, the fan-out node to loop back to).
 */
export type Report = (
  code: DiagnosticCode,
  message: string,
  where?: Omit<Diagnostic, 'code' | 'severity' | 'message' | 'hint'> & { readonly hint?: string },
) => void;

/** Formats diagnostics one per line, for error messages and the CLI; a warning says so. */
export function formatDiagnostics(diagnostics: readonly Diagnostic[]): string {
  return diagnostics
    .map(
      (d) =>
        `  ${d.severity === 'warning' ? 'warning ' : ''}${d.code} ${d.message} (fix: ${d.hint})`,
    )
    .join('\n');
}
