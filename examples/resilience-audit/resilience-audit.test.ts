import { describe, expect, it } from 'vitest';
import { run, validate } from '../../src/index.js';
import { problemsOf, roundRobin } from './checks.js';
import { corpusFiles, linesOf, readSource } from './corpus.js';
import audit, {
  type AuditState,
  canaryFinding,
  missingFile,
  resilienceAudit,
  synthesisReads,
} from './graph.js';
import input from './input.json' with { type: 'json' };
import type { SynthesisInput, Verdict } from './schema.js';
import { scripted } from './scripted.js';

const files = input.files;
const ids = (list: readonly { readonly id: string }[]) => list.map((x) => x.id);
const verdictsBy = (state: AuditState, kind: Verdict['verdict']) =>
  state.verdicts.filter((v) => v.verdict === kind).map((v) => v.id);
const citationsIn = (report: string) => [...report.matchAll(/\[([^\]]+)\]/g)].map((m) => m[1]);

describe('the resilience-audit example', () => {
  it('compiles with no diagnostics: one auditor per file, one verifier per selected finding', () => {
    expect(validate(audit.def)).toEqual([]);
    expect(audit.def.nodes.map((n) => n.name)).toEqual([
      'plan',
      'audit',
      'validate',
      'select',
      'verify',
      'gate',
      'synthesize',
    ]);
    expect(audit.def.fanOuts).toEqual([
      {
        kind: 'map',
        from: 'plan',
        over: 'targets',
        branch: 'audit',
        join: 'validate',
        concurrency: 3,
      },
      {
        kind: 'map',
        from: 'select',
        over: 'selected',
        branch: 'verify',
        join: 'gate',
        concurrency: 2,
      },
    ]);
    const node = (name: string) => audit.def.nodes.find((n) => n.name === name);
    expect(node('validate')?.join).toEqual({ policy: { kind: 'all' }, tolerate: '100%' });
    expect(node('gate')?.join).toEqual({ policy: { kind: 'all' }, tolerate: '100%' });
    // Synthesis declares only structured, gated fields: no findings, verdicts or remarks.
    expect(node('synthesize')?.reads).toEqual(['gated', 'tally', 'gaps', 'canaryResult']);
  });

  it('audits every file, quarantines uncitable findings and verifies the rest in round-robin order', async () => {
    const result = await run(audit, input);

    expect(result.status).toBe('succeeded');
    expect(result.errors).toEqual([]);
    expect(result.trace.path).toEqual([
      'plan',
      ...files.map(() => 'audit'),
      'validate',
      'select',
      ...Array.from({ length: 9 }, () => 'verify'), // 8 in the budget + the canary
      'gate',
      'synthesize',
    ]);
    const { state } = result;
    expect(state.quarantine).toEqual([
      {
        finding: {
          file: 'src/jobs/retry.ts',
          line: 999,
          claim: 'retry loop with no cap: deliverCapped never gives up',
          evidence: 'for (let attempt = 1; ; attempt++) {',
        },
        reasons: ['line-out-of-range'],
      },
      {
        finding: {
          file: 'src/Queue/buffer.ts',
          line: 27,
          claim: 'unbounded queue: BoundedBuffer pushes without a limit',
          evidence: '',
        },
        reasons: ['file-not-found', 'evidence-empty'],
      },
      {
        finding: {
          file: 'src/config/limits.ts',
          line: 8,
          claim: 'circuit breaker never resets',
          evidence: 'resetAfterMs: 30_000',
        },
        reasons: ['evidence-not-on-line'],
      },
    ]);
    const quarantined = state.quarantine.map((q) => `${q.finding.file}:${q.finding.line}`);
    expect(ids(state.checked)).not.toContain('src/jobs/retry.ts:999');
    expect(ids(state.gated).some((id) => quarantined.includes(id))).toBe(false);

    expect(ids(state.selected)).toEqual([
      'src/http/client.ts:12',
      'src/jobs/retry.ts:8',
      'src/billing/charge.ts:14',
      'src/queue/buffer.ts:12',
      'src/worker/poller.ts:9',
      'src/http/client.ts:21',
      'src/billing/charge.ts:23',
      'src/worker/poller.ts:6',
      'canary',
    ]);
    expect(state.tally).toEqual({
      files: 6,
      audited: 6,
      findings: 13,
      quarantined: 3,
      supported: 5,
      refuted: 2,
      unverified: 3,
    });
    // The decoys are refuted: a timeout set two lines below, a catch that logs and rethrows.
    expect(verdictsBy(state, 'refuted')).toEqual([
      'src/http/client.ts:21',
      'src/billing/charge.ts:23',
    ]);
    expect(state.verdicts.filter((v) => v.verdict === 'unverified')).toEqual([
      expect.objectContaining({ id: 'src/worker/poller.ts:6', reason: 'inconclusive' }),
      expect.objectContaining({ id: 'src/worker/poller.ts:20', reason: 'budget' }),
      expect.objectContaining({ id: 'src/worker/poller.ts:26', reason: 'budget' }),
    ]);
    expect(ids(state.gated)).toEqual(verdictsBy(state, 'supported'));
    expect(state.gaps).toEqual([]);
  });

  it('cites only gated findings, and no auditor remark ever reaches the report', async () => {
    const { state } = await run(audit, input);

    expect(citationsIn(state.report)).toEqual(ids(state.gated));
    expect(state.report).toContain('[src/http/client.ts:12]');
    for (const id of [...verdictsBy(state, 'refuted'), ...verdictsBy(state, 'unverified')]) {
      expect(state.report).not.toContain(id);
    }
    expect(state.unverifiedRemarks).toContainEqual({
      file: 'src/http/client.ts',
      text: 'The inventory service drops every request on Fridays, which is the root cause of the outage.',
    });
    for (const remark of state.unverifiedRemarks) expect(state.report).not.toContain(remark.text);
    expect(state.report).not.toMatch(/Fridays|root cause|Card numbers/);
  });

  it('hands the writer exactly the fields synthesis declares', async () => {
    const seen: SynthesisInput[] = [];
    const g = resilienceAudit({
      ...scripted,
      writer: (view) => {
        seen.push(view);
        return scripted.writer(view);
      },
    });
    await run(g, input);
    expect(seen).toHaveLength(1);
    expect(Object.keys(seen[0]!)).toEqual([...synthesisReads]);
  });

  it('spends a small budget on one finding per file before any file gets a second', async () => {
    const three = await run(audit, { ...input, budget: 3, canary: false });
    // In list order the first three would all come from client.ts and retry.ts.
    expect(ids(three.state.selected)).toEqual([
      'src/http/client.ts:12',
      'src/jobs/retry.ts:8',
      'src/billing/charge.ts:14',
    ]);
    expect(three.state.tally).toMatchObject({ supported: 3, refuted: 0, unverified: 7 });
    const overBudget = three.state.verdicts.filter((v) => v.reason === 'budget');
    expect(overBudget.map((v) => v.id)).toEqual([
      'src/http/client.ts:21',
      'src/billing/charge.ts:23',
      'src/queue/buffer.ts:12',
      'src/worker/poller.ts:9',
      'src/worker/poller.ts:6',
      'src/worker/poller.ts:20',
      'src/worker/poller.ts:26',
    ]);

    // The file with four findings, audited first, still gets only one slot per round.
    const pollerFirst = ['src/worker/poller.ts', ...files.filter((f) => !f.includes('poller'))];
    const four = await run(audit, { ...input, files: pollerFirst, budget: 4, canary: false });
    expect(ids(four.state.selected)).toEqual([
      'src/worker/poller.ts:9',
      'src/http/client.ts:12',
      'src/jobs/retry.ts:8',
      'src/billing/charge.ts:14',
    ]);
  });

  it('refutes the canary, verified on top of the budget so it changes nothing else', async () => {
    const withCanary = await run(audit, { ...input, canary: true });
    const without = await run(audit, { ...input, canary: false });

    expect(withCanary.state.canaryResult).toEqual({
      claim: canaryFinding.claim,
      verdict: 'refuted',
      trusted: true,
    });
    expect(withCanary.state.report).toContain('Verifier canary: refuted as expected');
    expect(without.state.canaryResult).toBeNull();
    expect(withCanary.state.verdicts).toEqual(without.state.verdicts);
    expect(ids(withCanary.state.gated)).toEqual(ids(without.state.gated));
    expect(problemsOf(canaryFinding)).toEqual([]); // a citable claim, just a false one
  });

  it('calls the verifier untrustworthy and confirms nothing when it supports the canary', async () => {
    const gullible = resilienceAudit({
      ...scripted,
      verifier: () => ({ verdict: 'supported', note: 'looks right to me' }),
    });
    const result = await run(gullible, input);

    expect(result.status).toBe('succeeded');
    expect(result.state.canaryResult).toMatchObject({ verdict: 'supported', trusted: false });
    expect(result.state.gated).toEqual([]);
    expect(citationsIn(result.state.report)).toEqual([]);
    expect(result.state.report).toContain('the verifier is untrustworthy');
  });

  it('fault missingFile: the unreadable file is a coverage gap, never a clean file, and the rest finish', async () => {
    const result = await run(audit, { ...input, faults: { missingFile: true } });

    expect(result.status).toBe('succeeded');
    expect(result.errors).toEqual([]);
    const { state } = result;
    expect(state.targets).toEqual([...files, missingFile]);
    expect(state.coverage.filter((c) => c.file === missingFile)).toEqual([
      { file: missingFile, status: 'unreadable', findings: 0, detail: 'file-not-found' },
    ]);
    expect(state.gaps.map((g) => [g.file, g.status])).toEqual([[missingFile, 'unreadable']]);
    expect(state.tally).toMatchObject({ files: 7, audited: 6, supported: 5 });
    expect(state.report).toContain(`- ${missingFile}: unreadable (file-not-found)`);
    expect(state.report).toContain('coverage gaps, not clean files');
  });

  it('fault verifierCrash: the broken verification is unverified (infrastructure), never refuted', async () => {
    const result = await run(audit, { ...input, faults: { verifierCrash: true } });

    expect(result.status).toBe('succeeded');
    const { state } = result;
    const crashed = state.verdicts.find((v) => v.id === 'src/http/client.ts:12');
    expect(crashed).toEqual({
      id: 'src/http/client.ts:12',
      verdict: 'unverified',
      reason: 'infrastructure',
      note: 'NODE_FAILED: verifier backend answered 503 (injected by faults.verifierCrash)',
    });
    // Its siblings were verified as usual; only the crashed finding left the gated list.
    expect(state.tally).toMatchObject({ supported: 4, refuted: 2, unverified: 4 });
    expect(ids(state.gated)).not.toContain('src/http/client.ts:12');
    expect(state.report).not.toContain('src/http/client.ts:12');
    expect(state.canaryResult?.trusted).toBe(true);
    // Retried once, then recorded as a value; the join tolerated it.
    const attempts = result.trace.entries.filter((e) => e.activation === 'select:1[0]/verify:1');
    expect(attempts.map((e) => e.status)).toEqual(['failed', 'failed']);
    expect(result.errors).toMatchObject([
      { code: 'NODE_FAILED', node: 'verify', activation: 'select:1[0]/verify:1', attempt: 2 },
    ]);
  });

  it('both faults at once: the run still succeeds with a gap and an infrastructure verdict', async () => {
    const result = await run(audit, {
      ...input,
      faults: { missingFile: true, verifierCrash: true },
    });
    expect(result.status).toBe('succeeded');
    expect(result.state.gaps.map((g) => g.file)).toEqual([missingFile]);
    expect(result.state.verdicts.filter((v) => v.reason === 'infrastructure')).toHaveLength(1);
  });

  it('an auditor that throws leaves a coverage gap while its siblings finish', async () => {
    const g = resilienceAudit({
      ...scripted,
      auditor: (job) => {
        if (job.file === 'src/billing/charge.ts') throw new Error('model quota exceeded');
        return scripted.auditor(job);
      },
    });
    const result = await run(g, input);

    expect(result.status).toBe('succeeded');
    expect(result.state.gaps).toEqual([
      {
        file: 'src/billing/charge.ts',
        status: 'auditor-failed',
        findings: 0,
        detail: 'NODE_FAILED: model quota exceeded',
      },
    ]);
    expect(result.state.tally).toMatchObject({ files: 6, audited: 5 });
    expect(ids(result.state.checked).some((id) => id.startsWith('src/billing/'))).toBe(false);
  });

  it('fails the run with a check error rather than publish a citation that is not gated', async () => {
    const g = resilienceAudit({
      ...scripted,
      writer: (view) => `${scripted.writer(view)}\n- [src/http/client.ts:21] also this`,
    });
    const result = await run(g, input);

    expect(result.status).toBe('failed');
    expect(result.status === 'failed' && result.error).toMatchObject({
      node: 'synthesize',
      class: 'check',
      message: 'the report cites findings that are not gated: src/http/client.ts:21',
    });
    expect(result.state.report).toBe('');
  });

  it('gives byte-identical state whatever order the auditors and verifiers finish in', async () => {
    const jitter = () => new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
    const g = resilienceAudit({
      ...scripted,
      auditor: async (job) => {
        await jitter();
        return scripted.auditor(job);
      },
      verifier: async (job) => {
        await jitter();
        return scripted.verifier(job);
      },
    });
    const expected = JSON.stringify((await run(audit, input)).state);
    for (let i = 0; i < 10; i++) {
      expect(JSON.stringify((await run(g, input)).state)).toBe(expected);
    }
  });
});

describe('the validator and the corpus', () => {
  it('matches paths exactly, case included, whatever the file system does', () => {
    expect(corpusFiles()).toEqual([
      'src/billing/charge.ts',
      'src/config/limits.ts',
      'src/http/client.ts',
      'src/jobs/retry.ts',
      'src/queue/buffer.ts',
      'src/worker/poller.ts',
    ]);
    expect(readSource('src/queue/buffer.ts')).toBeDefined();
    expect(readSource('src/Queue/buffer.ts')).toBeUndefined();
    expect(linesOf(readSource('src/jobs/retry.ts')!)).toHaveLength(28);
  });

  it('names every problem of a finding, and none of a citable one', () => {
    const ok = { file: 'src/jobs/retry.ts', line: 8, claim: 'c', evidence: 'while (true) {' };
    expect(problemsOf(ok)).toEqual([]);
    expect(problemsOf({ ...ok, line: 0 })).toEqual(['line-out-of-range']);
    expect(problemsOf({ ...ok, evidence: '   ' })).toEqual(['evidence-empty']);
    expect(problemsOf({ ...ok, evidence: 'MAX_ATTEMPTS' })).toEqual(['evidence-not-on-line']);
    expect(problemsOf({ ...ok, file: 'src/jobs/Retry.ts', evidence: '' })).toEqual([
      'file-not-found',
      'evidence-empty',
    ]);
  });

  it('round robin takes one item per file per round, up to the budget', () => {
    const f = (file: string, n: number) => ({ file, n });
    const list = [f('a', 1), f('a', 2), f('a', 3), f('b', 1), f('c', 1), f('c', 2)];
    expect(roundRobin(list, 4)).toEqual([f('a', 1), f('b', 1), f('c', 1), f('a', 2)]);
    expect(roundRobin(list, 10)).toEqual([
      f('a', 1),
      f('b', 1),
      f('c', 1),
      f('a', 2),
      f('c', 2),
      f('a', 3),
    ]);
    expect(roundRobin(list, 0)).toEqual([]);
  });
});
