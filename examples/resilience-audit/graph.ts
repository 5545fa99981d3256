import { z } from 'zod';
import { append, graph, WaymarkError } from '../../src/index.js';
import { problemsOf, roundRobin, withIds } from './checks.js';
import { readSource } from './corpus.js';
import {
  CanaryResult,
  Check,
  Checked,
  Coverage,
  Finding,
  Quarantined,
  Remark,
  type Steps,
  type SynthesisInput,
  Tally,
  Task,
  Verdict,
} from './schema.js';
import { scripted } from './scripted.js';

/**
 * A scatter-gather audit of a bundled corpus for resilience defects: one auditor per file, a
 * deterministic validator that quarantines uncitable findings, a budgeted round-robin verifier
 * gate with three-state verdicts and an optional canary, and a report that cites only findings
 * that were validated and supported.
 */
export const State = z.object({
  /** Corpus paths to audit, e.g. `src/http/client.ts`. */
  files: z.array(z.string()),
  /** Most findings verified; the rest are `unverified` with reason `budget`. */
  budget: z.number().int().min(0).default(8),
  /** Add a known-false claim to the verifications; the verifier is trusted only if it refutes it. */
  canary: z.boolean().default(false),
  /** Reproduce classic failures: an auditor given a missing file, a verifier that throws. */
  faults: z
    .object({
      missingFile: z.boolean().default(false),
      verifierCrash: z.boolean().default(false),
    })
    .prefault({}),
  targets: z.array(z.string()).default([]),
  findings: z.array(Finding).default([]),
  unverifiedRemarks: z.array(Remark).default([]),
  coverage: z.array(Coverage).default([]),
  checked: z.array(Checked).default([]),
  quarantine: z.array(Quarantined).default([]),
  gaps: z.array(Coverage).default([]),
  selected: z.array(Task).default([]),
  checks: z.array(Check).default([]),
  verdicts: z.array(Verdict).default([]),
  gated: z.array(Checked).default([]),
  tally: Tally.default({
    files: 0,
    audited: 0,
    findings: 0,
    quarantined: 0,
    supported: 0,
    refuted: 0,
    unverified: 0,
  }),
  canaryResult: CanaryResult.nullable().default(null),
  report: z.string().default(''),
});
export type AuditState = z.output<typeof State>;

/** The file `faults.missingFile` adds to the audit: it is not in the corpus. */
export const missingFile = 'src/payments/gateway.ts';

/** The canary: a known-false claim (the line caps retries at 3) that a sound verifier refutes. */
export const canaryFinding: Finding = {
  file: 'src/config/limits.ts',
  line: 4,
  claim: 'retry loop with no cap: maxRetries is unbounded',
  evidence: 'maxRetries: 3,',
};
const canaryId = 'canary';

/** What synthesis reads: structured, gated fields only; never findings, verdicts or remarks. */
export const synthesisReads = ['gated', 'tally', 'gaps', 'canaryResult'] as const;

/**
 * Builds the audit graph around its model steps; the default export uses the scripted ones.
 *
 * @example
 * const result = await run(resilienceAudit({ ...scripted, verifier: myModelVerifier }), { files });
 */
export function resilienceAudit(steps: Steps = scripted) {
  return graph('resilience-audit', {
    state: State,
    version: 1,
    reducers: { findings: append, unverifiedRemarks: append, coverage: append, checks: append },
  })
    .node(
      'plan',
      (s) => ({ targets: s.faults.missingFile ? [...s.files, missingFile] : [...s.files] }),
      { reads: ['files', 'faults'], writes: ['targets'] },
    )
    .node(
      'audit',
      async (_s, ctx) => {
        const file = String(ctx.item);
        const source = readSource(file);
        // Reported as a gap, not as a file with no findings: "clean" needs someone to have read it.
        if (source === undefined) {
          return {
            coverage: [{ file, status: 'unreadable', findings: 0, detail: 'file-not-found' }],
          };
        }
        const { findings, remarks } = await steps.auditor({ file, source });
        return {
          findings: [...findings],
          unverifiedRemarks: remarks.map((text) => ({ file, text })),
          coverage: [{ file, status: 'audited', findings: findings.length, detail: '' }],
        };
      },
      {
        reads: [],
        writes: ['findings', 'unverifiedRemarks', 'coverage'],
        retry: { attempts: 2, backoffMs: 10 },
        timeoutMs: 10_000,
      },
    )
    .node(
      'validate',
      (s, ctx) => {
        // An auditor that failed for good leaves a gap too; the join tolerates it.
        const failed: Coverage[] = (ctx.join?.failed ?? []).map(({ index, error }) => ({
          file: s.targets[index] ?? `#${index}`,
          status: 'auditor-failed',
          findings: 0,
          detail: `${error.code}: ${error.message}`,
        }));
        const covered = [...s.coverage, ...failed];
        const gaps = s.targets.flatMap((file) =>
          covered.filter((c) => c.file === file && c.status !== 'audited'),
        );
        const citable: Finding[] = [];
        const quarantine: Quarantined[] = [];
        for (const finding of s.findings) {
          const reasons = problemsOf(finding);
          if (reasons.length === 0) citable.push(finding);
          else quarantine.push({ finding, reasons });
        }
        return { checked: withIds(citable), quarantine, coverage: failed, gaps };
      },
      {
        tolerate: '100%',
        reads: ['targets', 'findings', 'coverage'],
        writes: ['checked', 'quarantine', 'coverage', 'gaps'],
      },
    )
    .node(
      'select',
      (s) => {
        const picked = roundRobin(s.checked, s.budget).map((f) => ({ ...f, canary: false }));
        // The canary comes on top of the budget: turning it on never changes what gets verified.
        const canary = { ...canaryFinding, id: canaryId, canary: true };
        return { selected: s.canary ? [...picked, canary] : picked };
      },
      { reads: ['checked', 'budget', 'canary'], writes: ['selected'] },
    )
    .node(
      'verify',
      async (s, ctx) => {
        const task = Task.parse(ctx.item);
        if (s.faults.verifierCrash && ctx.index === 0) {
          throw new Error('verifier backend answered 503 (injected by faults.verifierCrash)');
        }
        const source = readSource(task.file);
        if (source === undefined) {
          return { checks: [{ id: task.id, verdict: 'unverified', note: 'file not in corpus' }] };
        }
        // The verifier sees the claim and the file, never whether it is the canary.
        const { file, line, claim, evidence } = task;
        const answer = await steps.verifier({ finding: { file, line, claim, evidence }, source });
        return { checks: [{ id: task.id, verdict: answer.verdict, note: answer.note }] };
      },
      {
        reads: ['faults'],
        writes: ['checks'],
        retry: { attempts: 2, backoffMs: 10 },
        timeoutMs: 10_000,
      },
    )
    .node(
      'gate',
      (s, ctx) => {
        const checks = new Map(s.checks.map((c) => [c.id, c]));
        const broken = new Map(
          (ctx.join?.failed ?? []).map(({ index, error }) => [
            s.selected[index]?.id,
            `${error.code}: ${error.message}`,
          ]),
        );
        const selected = new Set(s.selected.map((t) => t.id));
        const verdictOf = (id: string): Verdict => {
          const check = checks.get(id);
          if (check?.verdict === 'unverified') return { ...check, reason: 'inconclusive' };
          if (check !== undefined) return check;
          // A verifier that broke says nothing about the claim: unverified, never refuted.
          const failure = broken.get(id);
          if (failure !== undefined || selected.has(id)) {
            const note = failure ?? 'the verification did not complete';
            return { id, verdict: 'unverified', reason: 'infrastructure', note };
          }
          const note = `beyond the budget of ${s.budget} verification(s)`;
          return { id, verdict: 'unverified', reason: 'budget', note };
        };
        const verdicts = s.checked.map((f) => verdictOf(f.id));
        const canary = s.canary ? verdictOf(canaryId).verdict : undefined;
        const canaryResult =
          canary === undefined
            ? null
            : { claim: canaryFinding.claim, verdict: canary, trusted: canary === 'refuted' };
        // A verifier that supports a known-false claim cannot confirm anything else either.
        const trusted = canaryResult?.trusted ?? true;
        const gated = trusted
          ? s.checked.filter((_f, i) => verdicts[i]?.verdict === 'supported')
          : [];
        const count = (kind: Verdict['verdict']) =>
          verdicts.filter((v) => v.verdict === kind).length;
        const tally = {
          files: s.targets.length,
          audited: s.coverage.filter((c) => c.status === 'audited').length,
          findings: s.findings.length,
          quarantined: s.quarantine.length,
          supported: count('supported'),
          refuted: count('refuted'),
          unverified: count('unverified'),
        };
        return { verdicts, gated, tally, canaryResult };
      },
      {
        tolerate: '100%',
        reads: [
          'checked',
          'selected',
          'checks',
          'budget',
          'canary',
          'targets',
          'coverage',
          'findings',
          'quarantine',
        ],
        writes: ['verdicts', 'gated', 'tally', 'canaryResult'],
      },
    )
    .node(
      'synthesize',
      async (s) => {
        // `reads` makes `s` a view of the declared fields only (reading findings, verdicts or
        // remarks here throws READ_DENIED); the writer gets a plain copy of exactly those.
        const input: SynthesisInput = pick(s, synthesisReads);
        const report = await steps.writer(input);
        const allowed = new Set(s.gated.map((f) => f.id));
        const cited = [...report.matchAll(/\[([^\]\s]+:\d+(?:#\d+)?)\]/g)].map((m) => m[1] ?? '');
        const stray = cited.filter((id) => !allowed.has(id));
        if (stray.length > 0) {
          throw new WaymarkError(
            'NODE_FAILED',
            `the report cites findings that are not gated: ${stray.join(', ')}`,
            { errorClass: 'check', retryable: false, details: { stray } },
          );
        }
        return { report };
      },
      { reads: synthesisReads, writes: ['report'], terminal: true },
    )
    .map('plan', { over: 'targets', branch: 'audit', join: 'validate', concurrency: 3 })
    .edge('audit', 'validate')
    .edge('validate', 'select')
    .map('select', { over: 'selected', branch: 'verify', join: 'gate', concurrency: 2 })
    .edge('verify', 'gate')
    .edge('gate', 'synthesize')
    .entry('plan')
    .compile();
}

/** A copy of `state` with only the fields in `keys`. */
function pick<S, K extends keyof S>(state: S, keys: readonly K[]): Pick<S, K> {
  return Object.fromEntries(keys.map((k) => [k, state[k]])) as Pick<S, K>;
}

export default resilienceAudit();
