import { z } from 'zod';
import { append, graph, type NodeFn, WaymarkError } from '../../src/index.js';
import { type ModelRef, model, type PriceTable } from '../../src/model/index.js';
import { problemsOf, roundRobin, withIds } from './checks.js';
import { readSource } from './corpus.js';
import { fileAudit } from './file-audit.js';
import { auditorSystem, numbered, prompt, verifierSystem, writerSystem } from './prompts.js';
import {
  AuditorOutput,
  CanaryResult,
  Check,
  Checked,
  Coverage,
  Finding,
  Remark,
  type SynthesisInput,
  Tally,
  Task,
  Verdict,
  VerifierOutput,
  WriterOutput,
} from './schema.js';
import { scripted } from './scripted.js';

/**
 * A scatter-gather audit of a bundled corpus for resilience defects: one auditor model per file
 * whose deterministic check sends uncitable findings to the run's quarantine, a budgeted
 * round-robin verifier gate with three-state verdicts and an optional canary, and a writer model
 * that sees only validated, supported findings. The model nodes call a scripted model unless
 * the run names one (`waymark run ... --model openai:gpt-4o-mini`).
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
 * The models of the audit's model nodes: `model` for all three, or one per node. Each is an AI
 * SDK model object or `provider:model-id`; unset, the scripted model. A run started with a model
 * (`--model`) overrides them all.
 */
export interface Models {
  readonly model?: ModelRef;
  readonly auditor?: ModelRef;
  readonly verifier?: ModelRef;
  readonly writer?: ModelRef;
  /**
   * `subgraph`: each file runs the per-file audit graph of file-audit.ts (read, then the auditor
   * or a coverage gap) as a subgraph mapped over the files, instead of the one `audit` node.
   * The answers are the same; the quarantine and the trace name the child's nodes
   * (`audit/audit`).
   */
  readonly perFile?: 'node' | 'subgraph';
}

/**
 * Prices (US dollars per million tokens) of the models this example is run with, so a run
 * budget in dollars (`--max-cost`) can be counted: the scripted model costs nothing. A model
 * missing here runs, but a cost budget with it fails with `MODEL_PRICE_MISSING` before any call.
 */
export const prices: PriceTable = {
  'scripted:resilience-audit': { inputPerMillion: 0, outputPerMillion: 0 },
  'openai:gpt-4o-mini': { inputPerMillion: 0.15, outputPerMillion: 0.6 },
  'openai:gpt-4o': { inputPerMillion: 2.5, outputPerMillion: 10 },
};

/** Ids a report cites as `[file:line]` (or `[file:line#n]`) that are not among `gated`. */
export function strayCitations(
  report: string,
  gated: readonly { readonly id: string }[],
): string[] {
  const allowed = new Set(gated.map((f) => f.id));
  const cited = [...report.matchAll(/\[([^\]\s]+:\d+(?:#\d+)?)\]/g)].map((m) => m[1] ?? '');
  return cited.filter((id) => !allowed.has(id));
}

/**
 * Builds the audit graph around its models; the default export uses a new scripted one. The
 * graph is the same whatever answers.
 *
 * @example
 * const result = await run(resilienceAudit({ verifier: 'openai:gpt-4o-mini' }), { files });
 */
export function resilienceAudit(models: Models = {}) {
  const own = models.model ?? scripted();
  const auditorModel = models.auditor ?? own;
  const verifierModel = models.verifier ?? own;
  const writerModel = models.writer ?? own;

  /** One auditor per file; the file is the branch's item. */
  const auditor = model<AuditState, AuditorOutput>({
    model: auditorModel,
    system: auditorSystem,
    prompt: (_s, ctx) => {
      const file = String(ctx.item);
      return prompt('Audit this file.', { file, source: numbered(readSource(file) ?? '') });
    },
    output: AuditorOutput,
    // Uncitable findings go to the run's quarantine with their reasons, never into state.
    checkItems: { findings: problemsOf },
    // Free text cannot smuggle a claim past the gate: remarks are kept apart, unverified.
    // Coverage counts what was reported: what passed plus what the check set aside.
    update: ({ findings, remarks }, _s, { ctx, quarantined }) => {
      const file = String(ctx.item);
      const reported = findings.length + quarantined.length;
      return {
        findings: [...findings],
        unverifiedRemarks: remarks.map((text) => ({ file, text })),
        coverage: [{ file, status: 'audited', findings: reported, detail: '' }],
      };
    },
    temperature: 0,
    prices,
  });
  /** An unreadable file is a gap, not a file with no findings: no auditor is asked about it. */
  const audit: NodeFn<AuditState> = (s, ctx) => {
    const file = String(ctx.item);
    // Reported as a gap, not as a file with no findings: "clean" needs someone to have read it.
    if (readSource(file) === undefined) {
      return { coverage: [{ file, status: 'unreadable', findings: 0, detail: 'file-not-found' }] };
    }
    return auditor(s, ctx);
  };

  /** One verifier per selected finding; it never learns whether the finding is the canary. */
  const verify: NodeFn<AuditState> = (s, ctx) => {
    const task = Task.parse(ctx.item);
    if (s.faults.verifierCrash && ctx.index === 0) {
      throw new Error('verifier backend answered 503 (injected by faults.verifierCrash)');
    }
    const source = readSource(task.file);
    if (source === undefined) {
      return { checks: [{ id: task.id, verdict: 'unverified', note: 'file not in corpus' }] };
    }
    const { file, line, claim, evidence } = task;
    const verifier = model<AuditState, VerifierOutput>({
      model: verifierModel,
      system: verifierSystem,
      prompt: () =>
        prompt('Verify this claim.', {
          finding: { file, line, claim, evidence },
          source: numbered(source),
        }),
      output: VerifierOutput,
      update: ({ verdict, note }) => ({ checks: [{ id: task.id, verdict, note }] }),
      temperature: 0,
      prices,
    });
    return verifier(s, ctx);
  };

  /** The writer; the report ends with the model that wrote it: a scripted one says so. */
  const synthesize = model<AuditState, WriterOutput>({
    model: writerModel,
    system: writerSystem,
    // `reads` makes `s` a view of the declared fields only (reading findings, verdicts or
    // remarks here throws READ_DENIED): the prompt carries exactly those, nothing free-text.
    prompt: (s) => {
      const input: SynthesisInput = pick(s, synthesisReads);
      return prompt('Write the audit report.', input);
    },
    output: WriterOutput,
    update: ({ report }, s, call) => {
      const stray = strayCitations(report, s.gated);
      if (stray.length > 0) {
        throw new WaymarkError(
          'NODE_FAILED',
          `the report cites findings that are not gated: ${stray.join(', ')}`,
          { errorClass: 'check', retryable: false, details: { stray } },
        );
      }
      return { report: `${report}\n\n${byline(call.model)}` };
    },
    temperature: 0,
    prices,
  });

  const planned = graph('resilience-audit', {
    state: State,
    version: 1,
    reducers: { findings: append, unverifiedRemarks: append, coverage: append, checks: append },
  }).node(
    'plan',
    (s) => ({ targets: s.faults.missingFile ? [...s.files, missingFile] : [...s.files] }),
    { reads: ['files', 'faults'], writes: ['targets'] },
  );
  const audited =
    models.perFile === 'subgraph'
      ? planned.subgraph('audit', fileAudit(auditorModel, prices), {
          // The branch's item is the file; what the child found comes back through the reducers.
          input: (_s, { item }) => ({ file: String(item) }),
          output: {
            findings: 'findings',
            unverifiedRemarks: 'unverifiedRemarks',
            coverage: 'coverage',
          },
          reads: [],
          writes: ['findings', 'unverifiedRemarks', 'coverage'],
        })
      : planned.node('audit', audit, {
          // A wrapper around the auditor (for the unreadable file), so the kind is said here.
          kind: 'model',
          reads: [],
          writes: ['findings', 'unverifiedRemarks', 'coverage'],
          retry: { attempts: 2, backoffMs: 500 },
          timeoutMs: 60_000,
        });
  return audited
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
        // What reached state passed the auditor's check; what did not is in the run's quarantine.
        return { checked: withIds(s.findings), coverage: failed, gaps };
      },
      {
        tolerate: '100%',
        reads: ['targets', 'findings', 'coverage'],
        writes: ['checked', 'coverage', 'gaps'],
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
    .node('verify', verify, {
      // A wrapper around the verifier (for the faults), so the kind is said here.
      kind: 'model',
      reads: ['faults'],
      writes: ['checks'],
      retry: { attempts: 2, backoffMs: 500 },
      timeoutMs: 60_000,
    })
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
        // Coverage counts what each auditor reported; state holds what passed its check.
        const reported = s.coverage.reduce((n, c) => n + c.findings, 0);
        const tally = {
          files: s.targets.length,
          audited: s.coverage.filter((c) => c.status === 'audited').length,
          findings: reported,
          quarantined: reported - s.findings.length,
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
        ],
        writes: ['verdicts', 'gated', 'tally', 'canaryResult'],
      },
    )
    .node('synthesize', synthesize, {
      reads: synthesisReads,
      writes: ['report'],
      terminal: true,
      retry: { attempts: 2, backoffMs: 1000 },
      timeoutMs: 60_000,
    })
    .map('plan', { over: 'targets', branch: 'audit', join: 'validate', concurrency: 3 })
    .edge('audit', 'validate')
    .edge('validate', 'select')
    .map('select', { over: 'selected', branch: 'verify', join: 'gate', concurrency: 2 })
    .edge('verify', 'gate')
    .edge('gate', 'synthesize')
    .entry('plan')
    .compile();
}

/** The report's last line: which model wrote it, and that a scripted one is no model at all. */
function byline(name: string): string {
  return name.startsWith('scripted:')
    ? `Written by ${name}, a script: no model was called (--model provider:model-id runs one).`
    : `Written by ${name}.`;
}

/** A copy of `state` with only the fields in `keys`. */
function pick<S, K extends keyof S>(state: S, keys: readonly K[]): Pick<S, K> {
  return Object.fromEntries(keys.map((k) => [k, state[k]])) as Pick<S, K>;
}

export default resilienceAudit();
