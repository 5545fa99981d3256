import { linesOf, readSource } from './corpus.js';
import type { Checked, Finding, QuarantineReason } from './schema.js';

/**
 * Deterministic checks of the audit: what makes a finding citable at all, and which findings a
 * limited verification budget is spent on. No model involved.
 */

/**
 * Every reason a finding cannot be cited; empty when it can. The file must exist under exactly
 * that name, the line must be in it, and the evidence must be non-empty and on that line.
 *
 * @example
 * problemsOf({ file: 'src/jobs/retry.ts', line: 999, claim: '...', evidence: 'while (true)' }); // ['line-out-of-range']
 */
export function problemsOf(finding: Finding): QuarantineReason[] {
  const reasons: QuarantineReason[] = [];
  const source = readSource(finding.file);
  const evidence = finding.evidence.trim();
  if (source === undefined) reasons.push('file-not-found');
  if (evidence === '') reasons.push('evidence-empty');
  if (source === undefined) return reasons;
  const line = linesOf(source)[finding.line - 1];
  if (!Number.isInteger(finding.line) || finding.line < 1 || line === undefined) {
    reasons.push('line-out-of-range');
  } else if (evidence !== '' && !line.includes(evidence)) {
    reasons.push('evidence-not-on-line');
  }
  return reasons;
}

/**
 * Gives each finding the id a report cites it by, `file:line`; a second finding on the same
 * line gets `file:line#2`, so ids stay unique and stable for the same audit.
 */
export function withIds(findings: readonly Finding[]): Checked[] {
  const seen = new Map<string, number>();
  return findings.map((f) => {
    const base = `${f.file}:${f.line}`;
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return { ...f, id: n === 1 ? base : `${base}#${n}` };
  });
}

/**
 * Picks at most `budget` findings, one per file per round, files in the order they were
 * audited: a file with many findings cannot starve the others of verification.
 *
 * @example
 * roundRobin([a1, a2, a3, b1], 3); // [a1, b1, a2]
 */
export function roundRobin<T extends { readonly file: string }>(
  findings: readonly T[],
  budget: number,
): T[] {
  const byFile = new Map<string, T[]>();
  for (const f of findings) byFile.set(f.file, [...(byFile.get(f.file) ?? []), f]);
  const queues = [...byFile.values()];
  const picked: T[] = [];
  for (let round = 0; picked.length < budget; round++) {
    const layer = queues.flatMap((q) => q[round] ?? []);
    if (layer.length === 0) break;
    picked.push(...layer.slice(0, budget - picked.length));
  }
  return picked;
}
