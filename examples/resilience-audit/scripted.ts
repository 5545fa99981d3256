import { linesOf } from './corpus.js';
import type { Auditor, Finding, Steps, VerdictKind, Verifier, Writer } from './schema.js';

/**
 * Deterministic stand-ins for the audit's model steps. They behave like models do, warts
 * included: the auditor reports real defects, decoys that are not defects, a line that does
 * not exist, a path in the wrong case with no evidence, evidence from the wrong line, and
 * free-text remarks with claims nobody checked. The graph must cope with all of it.
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
      // Hallucinated: the file has 28 lines.
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
export const auditor: Auditor = ({ file }) => audits[file] ?? { findings: [], remarks: [] };

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

/** The scripted verifier: judges a claim by reading the block it cites. */
export const verifier: Verifier = ({ finding, source }) => {
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
};

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
export const writer: Writer = ({ gated, tally, gaps, canaryResult: canary }) =>
  [
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

/** The scripted steps the example runs with by default. */
export const scripted: Steps = { auditor, verifier, writer };
