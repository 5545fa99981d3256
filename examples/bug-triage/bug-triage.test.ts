import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { answer, loadTrace, MemoryStore, resume, run } from '../../src/index.js';
import { recordModel, replayModel, scriptedModel } from '../../src/model/index.js';
import { type FakeOpenAI, fakeOpenAI } from '../../test/model/fake-openai.js';
import triage, { bugTriage, classify, fixturesDir, State } from './graph.js';
import { fixSystem, testsSystem, triageSystem } from './prompts.js';
import { scripted, answer as scriptedAnswer } from './scripted.js';

describe('the bug-triage example', () => {
  it('fixes a logic bug with a code change and a regression test side by side, verifies both, and finishes without approval when billing is untouched', async () => {
    const result = await run(triage, { bug: 'search-pagination' });

    expect(result.status).toBe('succeeded');
    expect(result.trace.path).toEqual([
      ...['triage', 'reproduce', 'plan-fix'],
      ...['fix-code', 'update-tests'],
      ...['merge', 'verify', 'done'],
    ]);
    expect(result.state.repro?.kind).toBe('logic');
    expect(result.state.fix.map((f) => f.path)).toEqual(['search/paginate.mjs']);
    expect(result.state.tests.map((f) => f.path)).toEqual(['search/paginate.regression.mjs']);
    expect(result.state.verification?.passed).toBe(true);
    expect(result.state.verification?.runs.map((r) => r.stdout)).toEqual([
      expect.stringContaining('repro: pages are right'),
      'paginate regression: ok\n',
    ]);
    expect(result.state.approved).toBeNull();
    expect(result.state.outcome).toBe('fixed: search/paginate.mjs');
  });

  it('ran the repro as a real child process: its own pid and its own assertion are in the state', async () => {
    const result = await run(triage, { bug: 'search-pagination' });

    const repro = result.state.repro!;
    const pid = Number(repro.stdout.match(/repro \(pid (\d+)\)/)?.[1]);
    expect(pid).toBeGreaterThan(0);
    expect(pid).not.toBe(process.pid);
    expect(repro.exitCode).toBe(1);
    expect(repro.stderr).toContain('AssertionError');
    expect(repro.argv[0]).toBe('node');
  });

  it('stops a billing change at the approval gate, waiting with no process held, and ships it after answer and resume', async () => {
    const store = new MemoryStore();

    const first = await run(triage, { bug: 'billing-rounding' }, { store, runId: 'bill-1' });

    expect(first.status).toBe('waiting');
    expect(first.trace.path.at(-1)).toBe('verify');
    expect(first.state.verification?.passed).toBe(true);
    const [wait] = await store.listWaits('bill-1', { open: true });
    expect(wait?.requestId).toBe('bill-1/approve:1');
    expect(JSON.parse(wait!.request).prompt).toContain(
      'changes billing code (billing/invoice.mjs)',
    );

    await answer(store, 'bill-1', 'bill-1/approve:1', { approved: true }, { by: 'finance-lead' });
    const done = await resume(store, triage, 'bill-1');

    expect(done.status).toBe('succeeded');
    expect(done.state.outcome).toBe('fixed and approved: billing/invoice.mjs');
    expect((await loadTrace(store, 'bill-1')).path).toEqual([
      ...['triage', 'reproduce', 'plan-fix', 'fix-code', 'update-tests', 'merge', 'verify'],
      ...['approve', 'done'],
    ]);
  });

  it('records a rejected billing change as rejected, with the approver note', async () => {
    const store = new MemoryStore();
    await run(triage, { bug: 'billing-rounding' }, { store, runId: 'bill-2' });

    await answer(
      store,
      'bill-2',
      'bill-2/approve:1',
      { approved: false, note: 'round half to even, as the ledger does' },
      { by: 'finance-lead' },
    );
    const done = await resume(store, triage, 'bill-2');

    expect(done.status).toBe('succeeded');
    expect(done.state.outcome).toBe(
      'fix rejected at approval: round half to even, as the ledger does',
    );
  });

  it('sends a data failure to a backfill job, recorded once as an effect, instead of a code fix', async () => {
    const result = await run(triage, { bug: 'export-missing-email' }, { runId: 'data-1' });

    expect(result.status).toBe('succeeded');
    expect(result.trace.path).toEqual(['triage', 'reproduce', 'backfill', 'done']);
    expect(result.state.repro?.kind).toBe('data');
    expect(result.state.backfill).toEqual({
      job: 'data-1/backfill:1/backfill-job',
      table: 'users',
      field: 'email',
      ids: [17, 42],
    });
    expect(result.state.fix).toEqual([]);
  });

  it('reproduces a network failure again, and closes it as flaky when a later run gets through', async () => {
    const result = await run(triage, { bug: 'webhook-flaky' });

    expect(result.status).toBe('succeeded');
    expect(result.trace.path).toEqual([
      ...['triage', 'reproduce', 'retry', 'reproduce', 'retry', 'reproduce'],
      'done',
    ]);
    expect(result.state.round).toBe(3);
    expect(result.state.repro?.stdout).toContain('partner answered 200 OK');
    expect(result.state.outcome).toBe('not reproducible after 3 run(s): closed as flaky');
  });

  it('gives up on a network failure after 3 runs (the visit cap) and escalates', async () => {
    const result = await run(triage, { bug: 'webhook-down' });

    expect(result.status).toBe('succeeded');
    expect(result.trace.path).toEqual([
      ...['triage', 'reproduce', 'retry', 'reproduce', 'retry', 'reproduce', 'retry'],
      'escalate',
    ]);
    expect(result.errors.map((e) => e.code)).toEqual(['VISIT_CAP']);
    expect(result.state.outcome).toMatch(/^escalated to a person: VISIT_CAP/);
  });

  it('escalates a fix that does not pass its own repro, without asking for approval', async () => {
    const g = bugTriage({ fixCode: scriptedModel([{ object: { files: [] } }]) });

    const result = await run(g, { bug: 'billing-rounding' });

    expect(result.status).toBe('succeeded');
    expect(result.trace.path.slice(-2)).toEqual(['verify', 'escalate']);
    expect(result.state.verification?.passed).toBe(false);
  });

  it('refuses a model change that names a file outside the workspace', async () => {
    const g = bugTriage({
      fixCode: scriptedModel([
        { object: { files: [{ path: '../../outside.mjs', content: 'export {}' }] } },
      ]),
    });

    const result = await run(g, { bug: 'search-pagination' });

    expect(result.trace.path.slice(-2)).toEqual(['verify', 'escalate']);
    expect(result.errors[0]).toMatchObject({ node: 'verify', code: 'NODE_FAILED' });
    expect(result.errors[0]?.message).toContain('outside the workspace');
  });

  it('starts processes only from the nodes that declare them, and only node', () => {
    const execs = triage.def.nodes.filter((n) => n.exec !== undefined);

    expect(execs.map((n) => [n.name, n.exec])).toEqual([
      ['reproduce', ['node']],
      ['verify', ['node']],
    ]);
  });

  it('classifies a failure by what the process printed', () => {
    expect(classify({ exitCode: 0, stderr: '' })).toBe('none');
    expect(classify({ exitCode: 1, stderr: 'Error: connect ECONNRESET 203.0.113.7:443' })).toBe(
      'network',
    );
    expect(classify({ exitCode: 1, stderr: 'DataError: 2 user record(s) have no email' })).toBe(
      'data',
    );
    expect(classify({ exitCode: 1, stderr: 'AssertionError [ERR_ASSERTION]' })).toBe('logic');
  });

  it('ships an input.json that is valid input and names a bundled bug', () => {
    const input = JSON.parse(readFileSync(new URL('./input.json', import.meta.url), 'utf8'));

    expect(State.parse(input).bug).toBe('billing-rounding');
  });

  it('has three model nodes, triage, fix-code and update-tests; the repro stays code', () => {
    const kinds = Object.fromEntries(triage.def.nodes.map((n) => [n.name, n.kind]));

    expect(Object.keys(kinds).filter((name) => kinds[name] === 'model')).toEqual([
      'triage',
      'fix-code',
      'update-tests',
    ]);
    expect(kinds.reproduce).toBe('code');
    expect(kinds.verify).toBe('code');
  });

  it('says in its log that the scripted model answered when the run names no model', async () => {
    const result = await run(triage, { bug: 'search-pagination' });

    const modelLines = result.state.log.filter((line) =>
      /^(triage|fix-code|update-tests):/.test(line),
    );
    expect(modelLines).toHaveLength(3);
    for (const line of modelLines) expect(line).toMatch(/ \[model scripted:bug-triage\]$/);
    const usage = result.trace.entries.filter((e) => e.usage !== undefined);
    expect(usage.map((e) => [e.node, e.usage?.model])).toEqual([
      ['triage', 'scripted:bug-triage'],
      ['fix-code', 'scripted:bug-triage'],
      ['update-tests', 'scripted:bug-triage'],
    ]);
  });

  it('builds prompts from the declared reads, with the failure free of stack frames and machine paths', async () => {
    const m = scripted();
    await run(bugTriage({ model: m }), { bug: 'billing-rounding' });

    const [triageCall, ...fixCalls] = m.requests;
    expect(triageCall?.text).toContain('Invoice total is one cent short');
    expect(triageCall?.text).toContain('"billing/invoice.mjs"');
    expect(fixCalls).toHaveLength(2);
    for (const call of fixCalls) {
      expect(call.text).toContain('AssertionError');
      expect(call.text).toContain('0.28 !== 0.29');
      expect(call.text).toContain('Math.floor(sum * 100) / 100'); // the suspect file, whole
      expect(call.text).not.toContain(fixturesDir);
      expect(call.text).not.toMatch(/^\s+at /m);
    }
    // The schema goes with every call, as the provider's structured-output format.
    expect(m.requests.map((r) => r.options.responseFormat?.type)).toEqual(['json', 'json', 'json']);
  });

  it('runs under a dollar budget (--max-cost): the scripted model has a price, zero', async () => {
    const result = await run(triage, { bug: 'search-pagination' }, { budget: { maxCostUsd: 0.5 } });

    expect(result.status).toBe('succeeded');
    expect(result.spent.costUsd).toBe(0);
    expect(result.spent.inputTokens).toBeGreaterThan(0);
  });

  it('sets a suspect that is not a file of the project aside in the run quarantine', async () => {
    const hallucinating = scriptedModel([
      {
        object: {
          component: 'search',
          suspects: ['search/paginate.mjs', 'search/Paginator.ts'],
          summary: 'off by one',
        },
      },
    ]);
    const result = await run(bugTriage({ triage: hallucinating }), { bug: 'search-pagination' });

    expect(result.status).toBe('succeeded');
    expect(result.state.suspects).toEqual(['search/paginate.mjs']);
    expect(result.quarantine).toEqual([
      {
        node: 'triage',
        activation: 'triage:1',
        output: 'search/Paginator.ts',
        reasons: ['file-not-found'],
      },
    ]);
    expect(result.state.outcome).toBe('fixed: search/paginate.mjs');
  });
});

/** Answers a chat completion the way the scripted model would: same logic, over HTTP. */
function scriptedOverHttp(body: Record<string, unknown>) {
  const messages = body.messages as { role: string; content: string }[];
  const system = messages.find((m) => m.role === 'system')?.content ?? '';
  const user = messages.find((m) => m.role === 'user')?.content ?? '';
  return {
    content: JSON.stringify(scriptedAnswer(system, user)),
    usage: { prompt: 120, completion: 40 },
  };
}

/** The state without what differs between two runs of a child process: its pid. */
const samePids = (state: unknown) => JSON.parse(JSON.stringify(state).replace(/pid \d+/g, 'pid N'));

describe('the bug-triage example over a real provider path', () => {
  let server: FakeOpenAI | undefined;
  afterEach(async () => {
    vi.unstubAllEnvs();
    await server?.close();
    server = undefined;
  });

  it('records a billing run against a local OpenAI-compatible endpoint up to the approval, then replays it offline', async () => {
    server = await fakeOpenAI(scriptedOverHttp);
    vi.stubEnv('WAYMARK_OPENAI_BASE_URL', server.baseUrl);
    const cassette = join(mkdtempSync(join(tmpdir(), 'bug-triage-cassette-')), 'billing.json');

    const recorded = await run(
      bugTriage({ model: recordModel('openai-compatible:triage-small', cassette) }),
      { bug: 'billing-rounding' },
      { store: new MemoryStore(), runId: 'rec-1' },
    );

    expect(recorded.status).toBe('waiting');
    expect(recorded.trace.path.at(-1)).toBe('verify');
    expect(recorded.state.verification?.passed).toBe(true);
    expect(recorded.state.fix.map((f) => f.path)).toEqual(['billing/invoice.mjs']);
    expect(recorded.state.log).toContain(
      'fix-code: changed billing/invoice.mjs [model openai-compatible:triage-small]',
    );
    const usage = recorded.trace.entries.filter((e) => e.usage !== undefined);
    expect(usage.map((e) => [e.node, e.usage])).toEqual(
      ['triage', 'fix-code', 'update-tests'].map((node) => [
        node,
        { inputTokens: 120, outputTokens: 40, model: 'openai-compatible:triage-small' },
      ]),
    );
    // What went over the wire: the model id, the system prompts, the schema as json_schema.
    expect(server.requests).toHaveLength(3);
    expect(server.requests.map((r) => r.model)).toEqual([
      'triage-small',
      'triage-small',
      'triage-small',
    ]);
    const systems = server.requests.map((r) => (r.messages as { content: string }[])[0]?.content);
    expect(systems[0]).toBe(triageSystem);
    expect([...systems.slice(1)].sort()).toEqual([fixSystem, testsSystem].sort());
    for (const r of server.requests)
      expect(r.response_format).toMatchObject({ type: 'json_schema' });
    const file = JSON.parse(readFileSync(cassette, 'utf8'));
    expect(Object.keys(file.entries)).toHaveLength(3);
    for (const entry of Object.values(file.entries))
      expect(entry).toMatchObject({ model: 'openai-compatible:triage-small' });

    await server.close();
    server = undefined;
    const replayed = await run(
      bugTriage({ model: replayModel(cassette) }),
      { bug: 'billing-rounding' },
      { store: new MemoryStore(), runId: 'rec-1' },
    );

    expect(replayed.status).toBe('waiting');
    expect(replayed.trace.path).toEqual(recorded.trace.path);
    expect(samePids(replayed.state)).toEqual(samePids(recorded.state));
    expect(replayed.trace.entries.filter((e) => e.usage).map((e) => e.usage)).toEqual(
      usage.map((e) => e.usage),
    );
  });

  it('calls the run model (--model) instead of the scripted one', async () => {
    server = await fakeOpenAI(scriptedOverHttp);
    vi.stubEnv('WAYMARK_OPENAI_BASE_URL', server.baseUrl);
    const own = scripted();

    const result = await run(
      bugTriage({ model: own }),
      { bug: 'search-pagination' },
      {
        model: 'openai-compatible:override',
      },
    );

    expect(result.status).toBe('succeeded');
    expect(own.requests).toHaveLength(0);
    expect(server.requests).toHaveLength(3);
    expect(
      result.state.log.filter((l) => l.endsWith('[model openai-compatible:override]')),
    ).toHaveLength(3);
    expect(result.state.outcome).toBe('fixed: search/paginate.mjs');
  });
});
