import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { answer, loadTrace, MemoryStore, resume, run } from '../../src/index.js';
import triage, { bugTriage, classify, State } from './graph.js';
import { scripted } from './scripted.js';

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
    const g = bugTriage({ ...scripted, fixCode: () => [] });

    const result = await run(g, { bug: 'billing-rounding' });

    expect(result.status).toBe('succeeded');
    expect(result.trace.path.slice(-2)).toEqual(['verify', 'escalate']);
    expect(result.state.verification?.passed).toBe(false);
  });

  it('refuses a model change that names a file outside the workspace', async () => {
    const g = bugTriage({
      ...scripted,
      fixCode: () => [{ path: '../../outside.mjs', content: 'export {}' }],
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
});
