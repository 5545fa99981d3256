import { expect } from 'vitest';
import { z } from 'zod';
import {
  type Diagnostic,
  type DiagnosticCode,
  graph,
  isWaymarkError,
  type WaymarkError,
  warningCodes,
} from '../../src/index.js';

/** The state every graph in these tests shares: small, with one list field for reducers. */
export const State = z.object({
  topic: z.string(),
  notes: z.array(z.string()).default([]),
  done: z.boolean().default(false),
});

/** A fresh builder over {@link State}. */
export const declare = (name = 'g') => graph(name, { state: State });

/** A node body that changes nothing: validation never runs node bodies anyway. */
export const pass = () => undefined;

/**
 * What a diagnostic must look like: this code at this place, with its code's severity, a message
 * and a hint.
 * Used with `toEqual`, so a diagnostic that names a node or edge not listed here fails.
 */
export function problem(
  code: DiagnosticCode,
  where: { readonly node?: string; readonly edge?: { from: string; to: string } } = {},
) {
  return {
    code,
    severity: warningCodes.has(code) ? 'warning' : 'error',
    ...where,
    message: expect.stringMatching(/\S/),
    hint: expect.stringMatching(/\S/),
  };
}

/** A diagnostic as one sortable line, e.g. `EDGE_TARGET_UNKNOWN at research on research -> x`. */
export function line(d: Diagnostic): string {
  const edge = d.edge === undefined ? '' : ` on ${d.edge.from} -> ${d.edge.to}`;
  return `${d.code} at ${d.node ?? '-'}${edge}`;
}

/** The diagnostics as a sorted list of lines: compares as a set, so order is not asserted. */
export const lines = (diagnostics: readonly Diagnostic[]) => diagnostics.map(line).sort();

/** Runs `compile` and returns the WaymarkError it must throw; fails the test if it does not. */
export function compileError(compile: () => unknown): WaymarkError {
  let thrown: unknown;
  try {
    compile();
  } catch (error) {
    thrown = error;
  }
  expect(isWaymarkError(thrown), 'compile() should have thrown a WaymarkError').toBe(true);
  return thrown as WaymarkError;
}
