import { type ScriptedModel, type ScriptedRequest, scriptedModel } from '../../src/model/index.js';
import { linesOf } from './corpus.js';
import {
  type AuditorInput,
  auditorSystem,
  inputOf,
  unnumbered,
  type VerifierInput,
  verifierSystem,
  writerSystem,
} from './prompts.js';
import type {
  AuditorOutput,
  Finding,
  SynthesisInput,
  VerdictKind,
  VerifierOutput,
  WriterOutput,
} from './schema.js';

/**
 * The scripted model the audit runs with when no `--model` is given: deterministic answers to
 * the auditor, verifier and writer prompts that behave like models do, warts included. The
 * auditor reports real defects, decoys that are not defects, a line that does not exist, a path
 * in the wrong case with no evidence, evidence from the wrong line, and free-text remarks with
 * claims nobody checked. The graph must cope with all of it.
 */

const fetchHangs = 'fetch without a timeout';
const uncappedRetry = 'retry loop with no cap';
const swallowed = 'swallowed error';
const unboundedQueue = 'unbounded queue';

/** What the scripted auditor "says" about each corpus file. */
const audits: Readonly<Record<string, { findings: Finding[]; remarks: string[] }>> = {
  'src/http/client.ts': {
    findings: [
      {
        file: 'src/http/client.ts',
        line: 12,
        claim: `${fetchHangs}: getItem can hang on a slow inventory service`,
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a quoted source line, not a template
        evidence: 'await fetch(`${BASE_URL}/items/${sku}`)',
      },
      // A decoy: the probe's timeout is set on its options two lines below their declaration.
      {
        file: 'src/http/client.ts',
        line: 21,
        claim: `${fetchHangs}: the health probe can hang`,
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a quoted source line, not a template
        evidence: 'await fetch(`${BASE_URL}/health`, init)',
      },
    ],
    remarks: [
      'The inventory service drops every request on Fridays, which is the root cause of the outage.',
    ],
  },
  'src/jobs/retry.ts': {
    findings: [
      {
        file: 'src/jobs/retry.ts',
        line: 8,
        claim: `${uncappedRetry}: deliver retries a failing webhook forever`,
        evidence: 'while (true) {',
      },
      // Hallucinated: the file has 34 lines.
      {
        file: 'src/jobs/retry.ts',
        line: 999,
        claim: `${uncappedRetry}: deliverCapped never gives up`,
        evidence: 'for (let attempt = 1; ; attempt++) {',
      },
    ],
    remarks: [],
  },
  'src/billing/charge.ts': {
    findings: [
      {
        file: 'src/billing/charge.ts',
        line: 14,
        claim: `${swallowed}: a failed charge is reported as paid`,
        evidence: '} catch (err) {',
      },
      // A decoy: refund logs and rethrows.
      {
        file: 'src/billing/charge.ts',
        line: 23,
        claim: `${swallowed}: a failed refund disappears`,
        evidence: '} catch (err) {',
      },
    ],
    remarks: ['Card numbers are probably written to the application logs.'],
  },
  'src/queue/buffer.ts': {
    findings: [
      {
        file: 'src/queue/buffer.ts',
        line: 12,
        claim: `${unboundedQueue}: JobBuffer grows without limit under load`,
        evidence: 'this.items.push(job);',
      },
      // Wrong case in the path, and no evidence at all.
      {
        file: 'src/Queue/buffer.ts',
        line: 27,
        claim: `${unboundedQueue}: BoundedBuffer pushes without a limit`,
        evidence: '',
      },
    ],
    remarks: [],
  },
  'src/config/limits.ts': {
    findings: [
      // The evidence is real but sits on line 9.
      {
        file: 'src/config/limits.ts',
        line: 8,
        claim: 'circuit breaker never resets',
        evidence: 'resetAfterMs: 30_000',
      },
    ],
    remarks: ['Limits should live in environment variables.'],
  },
  'src/worker/poller.ts': {
    findings: [
      {
        file: 'src/worker/poller.ts',
        line: 9,
        claim: `${swallowed}: fulfilment failures are dropped`,
        evidence: 'fulfil(row).catch(() => {});',
      },
      {
        file: 'src/worker/poller.ts',
        line: 6,
        claim: 'poll loop with no backoff: pollForever queries the database in a tight loop',
        evidence: 'for (;;) {',
      },
      {
        file: 'src/worker/poller.ts',
        line: 20,
        claim: `${fetchHangs}: status can hang on the fulfilment service`,
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a quoted source line, not a template
        evidence: 'await fetch(`http://fulfilment.internal/orders/${id}`)',
      },
      {
        file: 'src/worker/poller.ts',
        line: 26,
        claim: `${unboundedQueue}: drain starts every fulfilment at once`,
        evidence: 'pending.push(fulfil({ id }))',
      },
    ],
    remarks: ['This worker was written in a hurry and nobody reviewed it.'],
  },
};

/** The scripted auditor: a fixed answer per file; a file it was not scripted for gets none. */
export function auditor({ file }: Pick<AuditorInput, 'file'>): AuditorOutput {
  return audits[file] ?? { findings: [], remarks: [] };
}

/**
 * The kinds of claim the scripted verifier can judge: a claim of that kind is refuted when the
 * block around the cited line (its run of non-blank lines, usually the function) shows the
 * guard the claim says is missing, and supported otherwise.
 */
const rules: readonly { kind: RegExp; guard: RegExp; guardName: string }[] = [
  { kind: /\btimeout\b/i, guard: /timeout|signal/i, guardName: 'a timeout or abort signal' },
  { kind: /\bretr(y|ies)\b/i, guard: /\bmax|attempts?\s*>=/i, guardName: 'a retry cap' },
  {
    kind: /\bswallowed\b/i,
    guard: /\bthrow\b|logger\.(error|warn)/,
    guardName: 'a log or rethrow',
  },
  { kind: /\bunbounded\b/i, guard: /length\s*>=|\bmax\b|capacity/i, guardName: 'a size limit' },
];

/** The scripted verifier: judges a claim by reading the block it cites in the source. */
export function verifier({ finding, source }: VerifierInput): VerifierOutput {
  const rule = rules.find((r) => r.kind.test(finding.claim));
  if (rule === undefined) {
    return { verdict: 'unverified', note: 'no way to check this kind of claim from the source' };
  }
  const block = blockAround(linesOf(source), finding.line);
  const guarded = block.some((line) => rule.guard.test(line));
  const verdict: VerdictKind = guarded ? 'refuted' : 'supported';
  return {
    verdict,
    note: guarded
      ? `the block around line ${finding.line} has ${rule.guardName}`
      : `the block around line ${finding.line} lacks ${rule.guardName}`,
  };
}

/** The run of non-blank lines that contains line `n` (1-based). */
function blockAround(lines: readonly string[], n: number): string[] {
  const blank = (i: number) => (lines[i] ?? '').trim() === '';
  let start = n - 1;
  let end = n - 1;
  while (start > 0 && !blank(start - 1)) start--;
  while (end < lines.length - 1 && !blank(end + 1)) end++;
  return lines.slice(start, end + 1);
}

/** The scripted writer: cites every gated finding, lists the coverage gaps, states the tallies. */
export function writer({ gated, tally, gaps, canaryResult: canary }: SynthesisInput): string {
  return [
    `Resilience audit of ${tally.files} file(s): ${tally.audited} audited, ${gaps.length} coverage gap(s).`,
    `Findings: ${tally.findings} reported, ${tally.quarantined} quarantined; ` +
      `verdicts: ${tally.supported} supported, ${tally.refuted} refuted, ${tally.unverified} unverified.`,
    '',
    gated.length > 0 ? 'Confirmed defects:' : 'No confirmed defects.',
    ...gated.map((f) => `- [${f.id}] ${f.claim}`),
    ...(gaps.length > 0
      ? ['', 'Not audited (coverage gaps, not clean files):']
      : ['', 'Every file was audited.']),
    ...gaps.map((g) => `- ${g.file}: ${g.status}${g.detail ? ` (${g.detail})` : ''}`),
    '',
    canary === null
      ? 'Verifier canary: not run.'
      : canary.trusted
        ? 'Verifier canary: refuted as expected; the verifier is trusted.'
        : `Verifier canary: came back ${canary.verdict}; the verifier is untrustworthy and no finding is confirmed.`,
  ].join('\n');
}

/**
 * The scripted answer to one request, by its system prompt (which node asks) and its user
 * prompt (the input block). The scripted model answers with it, and so does the fake
 * OpenAI-compatible server of the tests.
 *
 * @example
 * answer(auditorSystem, prompt('Audit this file.', { file, source })) // { findings, remarks }
 */
export function answer(
  system: string,
  user: string,
): AuditorOutput | VerifierOutput | WriterOutput {
  if (system === auditorSystem) return auditor(inputOf<AuditorInput>(user));
  if (system === verifierSystem) {
    const { finding, source } = inputOf<VerifierInput>(user);
    return verifier({ finding, source: unnumbered(source) });
  }
  if (system === writerSystem) return { report: writer(inputOf<SynthesisInput>(user)) };
  throw new Error('the scripted model has no answer for this system prompt');
}

/** The system prompt and the first user message of a request, as text. */
export function messagesOf(request: ScriptedRequest): { system: string; user: string } {
  let system = '';
  let user: string | undefined;
  for (const message of request.options.prompt) {
    const text =
      typeof message.content === 'string'
        ? message.content
        : message.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
    if (message.role === 'system') system = text;
    else if (message.role === 'user') user ??= text;
  }
  return { system, user: user ?? '' };
}

/**
 * A new scripted model for the audit's model nodes, named `scripted:resilience-audit`; `override`
 * answers first where it returns something (a test's gullible verifier, a failing auditor).
 *
 * @example
 * resilienceAudit({ model: scripted() })
 */
export function scripted(override?: (system: string, user: string) => unknown): ScriptedModel {
  return scriptedModel(
    async (request) => {
      const { system, user } = messagesOf(request);
      const answered = await override?.(system, user);
      return { object: answered ?? answer(system, user) };
    },
    { modelId: 'resilience-audit' },
  );
}
