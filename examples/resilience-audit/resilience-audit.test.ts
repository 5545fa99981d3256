import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { inspect, MemoryStore, type RunResult, run, validate } from '../../src/index.js';
import { recordModel, replayModel, scriptedModel } from '../../src/model/index.js';
import { type FakeOpenAI, fakeOpenAI } from '../../test/model/fake-openai.js';
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
import { auditorSystem, inputOf, writerSystem } from './prompts.js';
import type { SynthesisInput, Verdict } from './schema.js';
import { answer, messagesOf, scripted, writer } from './scripted.js';

const files = input.files;
const ids = (list: readonly { readonly id: string }[]) => list.map((x) => x.id);
const verdictsBy = (state: AuditState, kind: Verdict['verdict']) =>
  state.verdicts.filter((v) => v.verdict === kind).map((v) => v.id);
const citationsIn = (report: string) => [...report.matchAll(/\[([^\]]+)\]/g)].map((m) => m[1]);
/** The run's quarantine in branch order (entries are booked as branches finish). */
const quarantineOf = (result: RunResult<AuditState>) =>
  [...result.quarantine].sort((a, b) => a.activation.localeCompare(b.activation));

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
    // The auditor, the verifier and the writer are model nodes; the rest is deterministic code.
    expect(audit.def.nodes.filter((n) => n.kind === 'model').map((n) => n.name)).toEqual([
      'audit',
      'verify',
      'synthesize',
    ]);
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
    // Uncitable findings are in the run's quarantine with their reasons, not in state.
    expect(quarantineOf(result)).toEqual([
      {
        node: 'audit',
        activation: 'plan:1[1]/audit:1',
        output: {
          file: 'src/jobs/retry.ts',
          line: 999,
          claim: 'retry loop with no cap: deliverCapped never gives up',
          evidence: 'for (let attempt = 1; ; attempt++) {',
        },
        reasons: ['line-out-of-range'],
      },
      {
        node: 'audit',
        activation: 'plan:1[3]/audit:1',
        output: {
          file: 'src/Queue/buffer.ts',
          line: 27,
          claim: 'unbounded queue: BoundedBuffer pushes without a limit',
          evidence: '',
        },
        reasons: ['file-not-found', 'evidence-empty'],
      },
      {
        node: 'audit',
        activation: 'plan:1[4]/audit:1',
        output: {
          file: 'src/config/limits.ts',
          line: 8,
          claim: 'circuit breaker never resets',
          evidence: 'resetAfterMs: 30_000',
        },
        reasons: ['evidence-not-on-line'],
      },
    ]);
    expect(state).not.toHaveProperty('quarantine');
    const quarantined = result.quarantine.map((q) => {
      const f = q.output as { file: string; line: number };
      return `${f.file}:${f.line}`;
    });
    expect(state.findings.map((f) => `${f.file}:${f.line}`)).not.toContain('src/jobs/retry.ts:999');
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

  it('hands the writer model exactly the fields synthesis declares, and no free text of the auditors', async () => {
    const m = scripted();
    const result = await run(resilienceAudit({ model: m }), input);

    const writes = m.requests.filter((r) => messagesOf(r).system === writerSystem);
    expect(writes).toHaveLength(1);
    const { user } = messagesOf(writes[0]!);
    const seen = inputOf<SynthesisInput>(user);
    expect(Object.keys(seen)).toEqual([...synthesisReads]);
    expect(ids(seen.gated)).toEqual(ids(result.state.gated));
    // Nothing the gate did not pass reaches the writer's prompt: no remark, no refuted or
    // unverified finding, no quarantined one.
    for (const remark of result.state.unverifiedRemarks) expect(user).not.toContain(remark.text);
    expect(user).not.toMatch(/Fridays|root cause|Card numbers|written in a hurry/);
    for (const id of [
      ...verdictsBy(result.state, 'refuted'),
      ...verdictsBy(result.state, 'unverified'),
    ])
      expect(user).not.toContain(id);
    expect(user).not.toContain('deliverCapped never gives up');
    expect(user).not.toContain('src/Queue/buffer.ts');
  });

  it('says in its report that a scripted model wrote it when the run names no model', async () => {
    const result = await run(audit, input);

    expect(result.state.report.split('\n').at(-1)).toBe(
      'Written by scripted:resilience-audit, a script: no model was called (--model provider:model-id runs one).',
    );
    const models = new Set(result.trace.entries.flatMap((e) => e.usage?.model ?? []));
    expect([...models]).toEqual(['scripted:resilience-audit']);
  });

  it('runs under a dollar budget (--max-cost): the scripted model has a price, zero', async () => {
    const result = await run(audit, input, { budget: { maxCostUsd: 0.5 } });

    expect(result.status).toBe('succeeded');
    expect(result.spent.costUsd).toBe(0);
    expect(result.spent.inputTokens).toBeGreaterThan(0);
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
      verifier: scriptedModel(() => ({
        object: { verdict: 'supported', note: 'looks right to me' },
      })),
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
      model: scripted((system, user) => {
        if (system === auditorSystem && user.includes('"file": "src/billing/charge.ts"'))
          throw new Error('model quota exceeded');
      }),
    });
    const result = await run(g, input);

    expect(result.status).toBe('succeeded');
    expect(result.state.gaps).toEqual([
      {
        file: 'src/billing/charge.ts',
        status: 'auditor-failed',
        findings: 0,
        detail:
          'MODEL_CALL_FAILED: model "scripted:resilience-audit" call failed: model quota exceeded',
      },
    ]);
    expect(result.state.tally).toMatchObject({ files: 6, audited: 5 });
    expect(ids(result.state.checked).some((id) => id.startsWith('src/billing/'))).toBe(false);
  });

  it('fails the run with a check error rather than publish a citation that is not gated', async () => {
    const g = resilienceAudit({
      writer: scriptedModel((request) => {
        const view = inputOf<SynthesisInput>(messagesOf(request).user);
        return { object: { report: `${writer(view)}\n- [src/http/client.ts:21] also this` } };
      }),
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
    // Every model call waits a random while, so auditors and verifiers finish in any order.
    const g = resilienceAudit({ model: scripted(jitter) });
    const expected = JSON.stringify((await run(audit, input)).state);
    for (let i = 0; i < 10; i++) {
      expect(JSON.stringify((await run(g, input)).state)).toBe(expected);
    }
  });
});

describe('the quarantine', () => {
  it('a finding at line 999 of a 34-line file and one with a wrong-case path and empty evidence land in the run quarantine with their reasons, never in state', async () => {
    const store = new MemoryStore();
    const result = await run(audit, input, { store, runId: 'audit-q' });

    expect(linesOf(readSource('src/jobs/retry.ts')!)).toHaveLength(34);
    expect(result.quarantine).toContainEqual({
      node: 'audit',
      activation: 'plan:1[1]/audit:1',
      output: {
        file: 'src/jobs/retry.ts',
        line: 999,
        claim: 'retry loop with no cap: deliverCapped never gives up',
        evidence: 'for (let attempt = 1; ; attempt++) {',
      },
      reasons: ['line-out-of-range'],
    });
    expect(result.quarantine).toContainEqual({
      node: 'audit',
      activation: 'plan:1[3]/audit:1',
      output: {
        file: 'src/Queue/buffer.ts',
        line: 27,
        claim: 'unbounded queue: BoundedBuffer pushes without a limit',
        evidence: '',
      },
      reasons: ['file-not-found', 'evidence-empty'],
    });
    // Kept with the run for `waymark show`; nothing of them in state.
    const { snapshot } = await inspect(store, audit, 'audit-q');
    expect(snapshot.quarantine).toEqual(result.quarantine);
    const state = JSON.stringify(result.state);
    expect(state).not.toContain('src/Queue/buffer.ts');
    expect(state).not.toContain('deliverCapped never gives up');
    // Counted, though: the report says how many findings were set aside.
    expect(result.state.tally).toMatchObject({ findings: 13, quarantined: 3 });
    expect(result.state.report).toContain('Findings: 13 reported, 3 quarantined');
  });
});

/** Answers a chat completion the way the scripted model would: same logic, over HTTP. */
function scriptedOverHttp(body: Record<string, unknown>) {
  const messages = body.messages as { role: string; content: string }[];
  const system = messages.find((m) => m.role === 'system')?.content ?? '';
  const user = messages.find((m) => m.role === 'user')?.content ?? '';
  return { content: JSON.stringify(answer(system, user)), usage: { prompt: 200, completion: 50 } };
}

describe('the resilience audit over a real provider path', () => {
  let server: FakeOpenAI | undefined;
  afterEach(async () => {
    vi.unstubAllEnvs();
    await server?.close();
    server = undefined;
  });

  it('records a run against a local OpenAI-compatible endpoint, then replays it offline to the same state and quarantine', async () => {
    server = await fakeOpenAI(scriptedOverHttp);
    vi.stubEnv('WAYMARK_OPENAI_BASE_URL', server.baseUrl);
    const cassette = join(mkdtempSync(join(tmpdir(), 'resilience-audit-cassette-')), 'audit.json');

    const recorded = await run(
      resilienceAudit({ model: recordModel('openai-compatible:audit-small', cassette) }),
      input,
    );

    expect(recorded.status).toBe('succeeded');
    expect(recorded.errors).toEqual([]);
    expect(recorded.state.tally).toEqual({
      files: 6,
      audited: 6,
      findings: 13,
      quarantined: 3,
      supported: 5,
      refuted: 2,
      unverified: 3,
    });
    expect(quarantineOf(recorded).map((q) => [q.activation, q.reasons])).toEqual([
      ['plan:1[1]/audit:1', ['line-out-of-range']],
      ['plan:1[3]/audit:1', ['file-not-found', 'evidence-empty']],
      ['plan:1[4]/audit:1', ['evidence-not-on-line']],
    ]);
    expect(recorded.state.canaryResult?.trusted).toBe(true);
    expect(recorded.state.report.split('\n').at(-1)).toBe(
      'Written by openai-compatible:audit-small.',
    );
    // Every model call's tokens are in the trace: 6 auditors, 8 verifications + the canary, 1 writer.
    const usage = recorded.trace.entries.filter((e) => e.usage !== undefined);
    expect(usage.map((e) => e.node)).toEqual([
      ...files.map(() => 'audit'),
      ...Array.from({ length: 9 }, () => 'verify'),
      'synthesize',
    ]);
    for (const e of usage)
      expect(e.usage).toEqual({
        inputTokens: 200,
        outputTokens: 50,
        model: 'openai-compatible:audit-small',
      });
    expect(server.requests).toHaveLength(16);
    for (const r of server.requests) {
      expect(r.model).toBe('audit-small');
      expect(r.response_format).toMatchObject({ type: 'json_schema' });
    }
    const file = JSON.parse(readFileSync(cassette, 'utf8'));
    expect(Object.keys(file.entries)).toHaveLength(16);
    for (const entry of Object.values(file.entries))
      expect(entry).toMatchObject({ model: 'openai-compatible:audit-small' });

    await server.close();
    server = undefined;
    const replayed = await run(resilienceAudit({ model: replayModel(cassette) }), input);

    expect(replayed.status).toBe('succeeded');
    expect(replayed.state).toEqual(recorded.state);
    expect(quarantineOf(replayed)).toEqual(quarantineOf(recorded));
    expect(replayed.trace.entries.filter((e) => e.usage).map((e) => e.usage)).toEqual(
      usage.map((e) => e.usage),
    );
  });

  it('calls the run model (--model) instead of the scripted one, in every model node', async () => {
    server = await fakeOpenAI(scriptedOverHttp);
    vi.stubEnv('WAYMARK_OPENAI_BASE_URL', server.baseUrl);
    const own = scripted();

    const result = await run(resilienceAudit({ model: own }), input, {
      model: 'openai-compatible:override',
    });

    expect(result.status).toBe('succeeded');
    expect(own.requests).toHaveLength(0);
    expect(server.requests).toHaveLength(16);
    expect(result.state.report.split('\n').at(-1)).toBe('Written by openai-compatible:override.');
    expect(result.quarantine).toHaveLength(3);
  });
});

describe('the finding check and the corpus', () => {
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
    expect(linesOf(readSource('src/jobs/retry.ts')!)).toHaveLength(34);
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
