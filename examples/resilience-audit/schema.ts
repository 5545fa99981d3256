import { z } from 'zod';

/**
 * The data the audit passes between nodes, and the output schemas of its three model nodes
 * (auditor, verifier, writer): the model is asked for JSON matching them, whichever model it is.
 */

/** What an auditor claims: a defect at a line, with the text of that line as evidence. */
export const Finding = z.object({
  file: z.string(),
  line: z.number().int(),
  claim: z.string(),
  evidence: z.string(),
});
export type Finding = z.output<typeof Finding>;

/** A finding that passed the auditor's check, with the id reports cite it by (`file:line`). */
export const Checked = Finding.extend({ id: z.string() });
export type Checked = z.output<typeof Checked>;

/**
 * Why the auditor's check sets a finding aside in the run's quarantine instead of state;
 * machine-readable on purpose.
 */
export const QuarantineReason = z.enum([
  'file-not-found',
  'line-out-of-range',
  'evidence-empty',
  'evidence-not-on-line',
]);
export type QuarantineReason = z.output<typeof QuarantineReason>;

/** A free-text side remark of an auditor: never verified, never read by synthesis. */
export const Remark = z.object({ file: z.string(), text: z.string() });
export type Remark = z.output<typeof Remark>;

/** What happened to each file the audit was asked to cover. */
export const Coverage = z.object({
  file: z.string(),
  status: z.enum(['audited', 'unreadable', 'auditor-failed']),
  findings: z.number().int().default(0),
  detail: z.string().default(''),
});
export type Coverage = z.output<typeof Coverage>;

/** One verification to run: a checked finding, or the canary. */
export const Task = Checked.extend({ canary: z.boolean().default(false) });
export type Task = z.output<typeof Task>;

export const VerdictKind = z.enum(['supported', 'refuted', 'unverified']);
export type VerdictKind = z.output<typeof VerdictKind>;

/** Why a finding is `unverified`: nobody looked (budget), the verifier broke, or it could not tell. */
export const UnverifiedReason = z.enum(['budget', 'infrastructure', 'inconclusive']);
export type UnverifiedReason = z.output<typeof UnverifiedReason>;

/** One verifier answer, as a verify branch records it. */
export const Check = z.object({ id: z.string(), verdict: VerdictKind, note: z.string() });
export type Check = z.output<typeof Check>;

/** The verdict on every checked finding; `reason` is set exactly when it is `unverified`. */
export const Verdict = z.object({
  id: z.string(),
  verdict: VerdictKind,
  reason: UnverifiedReason.optional(),
  note: z.string(),
});
export type Verdict = z.output<typeof Verdict>;

export const Tally = z.object({
  files: z.number().int(),
  audited: z.number().int(),
  findings: z.number().int(),
  quarantined: z.number().int(),
  supported: z.number().int(),
  refuted: z.number().int(),
  unverified: z.number().int(),
});
export type Tally = z.output<typeof Tally>;

/** The canary's outcome: the verifier is trusted only if it refuted the known-false claim. */
export const CanaryResult = z.object({
  claim: z.string(),
  verdict: VerdictKind,
  trusted: z.boolean(),
});
export type CanaryResult = z.output<typeof CanaryResult>;

/** What the writer is allowed to see: structured, gated fields only. */
export interface SynthesisInput {
  readonly gated: readonly Checked[];
  readonly tally: Tally;
  readonly gaps: readonly Coverage[];
  readonly canaryResult: CanaryResult | null;
}

/**
 * The auditor's answer for one file: findings, checked one by one before they reach state, and
 * free-text remarks, which are kept apart as unverified and never reach the report.
 */
export const AuditorOutput = z.object({ findings: z.array(Finding), remarks: z.array(z.string()) });
export type AuditorOutput = z.output<typeof AuditorOutput>;

/** The verifier's answer on one claim. `unverified` means "could not tell". */
export const VerifierOutput = z.object({ verdict: VerdictKind, note: z.string() });
export type VerifierOutput = z.output<typeof VerifierOutput>;

/** The writer's answer: the report, citing a finding only as `[file:line]` of a gated one. */
export const WriterOutput = z.object({ report: z.string() });
export type WriterOutput = z.output<typeof WriterOutput>;
