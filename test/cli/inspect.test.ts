// `waymark ls`, `show`, `trace` and `graph --run`: reading runs back from the database. They run
// nothing, so the tests share one database holding a run that waits and a run that failed.
import { beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectExit, fixture, jsonOf, sandbox, testTimeoutMs } from './support.js';

const box = sandbox();
const review = fixture('review.ts');
const flaky = fixture('flaky.ts');

beforeAll(async () => {
  const [waiting, failed] = await Promise.all([
    box.waymark(['--quiet', 'run', review, '--input', '{"title":"T"}', '--run-id', 'w']),
    box.waymark(['--quiet', 'run', flaky, '--run-id', 'f'], { env: { FIXTURE_FAIL: '1' } }),
  ]);
  expectExit(waiting, 3);
  expectExit(failed, 1);
}, testTimeoutMs);

describe.concurrent('waymark ls', { timeout: testTimeoutMs }, () => {
  it('lists every run: id, status, graph, events, last update', async () => {
    const out = await box.waymark(['ls']);
    expectExit(out, 0);
    expect(out.lines).toHaveLength(2);
    expect(out.lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^w +waiting +review +\d+ events +\d{4}-\d\d-\d\dT\S+Z$/),
        expect.stringMatching(/^f +failed +flaky +\d+ events /),
      ]),
    );
  });

  it('--status filters, and --json prints one line of type "runs"', async () => {
    const out = await box.waymark(['--json', 'ls', '--status', 'waiting']);
    expectExit(out, 0);
    expect(jsonOf(out, 'runs').runs).toEqual([
      {
        runId: 'w',
        graph: 'review',
        status: 'waiting',
        // It stopped waiting: the process that ran it gave its lease up.
        live: null,
        lease: expect.objectContaining({ live: false, expiresAt: null, epoch: 1 }),
        seq: expect.any(Number),
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
    ]);
  });

  it('refuses a --status that is not a run status', async () => {
    const out = await box.waymark(['ls', '--status', 'done']);
    expectError(out, 'USAGE_INVALID');
    expect(out.errLines[0]).toContain('--status done is not a run status');
  });
});

describe.concurrent('waymark show', { timeout: testTimeoutMs }, () => {
  it('prints status, path, the open wait with its answer schema, and the state', async () => {
    const out = await box.waymark(['show', 'w']);
    expectExit(out, 0);
    expect(out.stdout).toContain('status   waiting after 1 step(s)');
    expect(out.stdout).toContain('pending  review:1');
    expect(out.stdout).toContain(
      'waiting  review asks "Publish "T (0 note(s) applied)"?" (request w/review:1)',
    );
    expect(out.stdout).toMatch(/answer schema: \{.*"approved":\{"type":"boolean"\}/);
    expect(out.stdout).toContain('"draft": "T (0 note(s) applied)"');
  });

  it('--json prints one run value: status, state, pending, waits, errors and the stop error', async () => {
    const out = await box.waymark(['--json', 'show', 'f']);
    expectExit(out, 0);
    const run = jsonOf(out, 'run');
    expect(Object.keys(run).sort()).toEqual(
      [
        'createdAt',
        'error',
        'errors',
        'graph',
        'heartbeats',
        'lease',
        'limits',
        'live',
        'path',
        'pending',
        'quarantine',
        'runId',
        'spent',
        'state',
        'status',
        'steps',
        'type',
        'updatedAt',
        'waits',
      ].sort(),
    );
    expect(run).toMatchObject({
      runId: 'f',
      graph: { name: 'flaky', version: 1, hash: expect.stringMatching(/^\w{64}$/) },
      status: 'failed',
      steps: 1,
      path: ['prepare', 'work'],
      state: { n: 1, done: false },
      pending: ['work:1'],
      waits: { open: [], answered: [] },
      errors: [{ activation: 'work:1', code: 'NODE_FAILED', class: 'permanent' }],
      error: { code: 'NODE_FAILED', message: 'work is down (FIXTURE_FAIL=1)' },
    });
  });
});

describe.concurrent('waymark trace', { timeout: testTimeoutMs }, () => {
  it('prints every attempt with its duration and error, then a summary', async () => {
    const out = await box.waymark(['trace', 'f']);
    expectExit(out, 0);
    expect(out.lines[0]).toBe('path: prepare -> work');
    expect(out.lines[1]).toMatch(/^\d{4}-\S+Z {2}✓ prepare:1 \d+ ms$/);
    expect(out.lines[2]).toMatch(/^\d{4}-\S+Z {2}✗ work:1 \d+ ms NODE_FAILED: work is down/);
    expect(out.lines[3]).toBe('2 activation(s), 2 attempt(s), 1 failed');
  });

  it('--json prints the path and every entry', async () => {
    const out = await box.waymark(['--json', 'trace', 'w']);
    expectExit(out, 0);
    const trace = jsonOf(out, 'trace');
    expect(trace).toMatchObject({ runId: 'w', path: ['draft'] });
    expect(trace.entries).toEqual([
      expect.objectContaining({
        node: 'draft',
        activation: 'draft:1',
        attempt: 1,
        status: 'succeeded',
        durationMs: expect.any(Number),
      }),
    ]);
  });
});

describe.concurrent('waymark graph --run', { timeout: testTimeoutMs }, () => {
  it('marks the path taken, the count per node and where the run stopped', async () => {
    const out = await box.waymark(['graph', flaky, '--run', 'f']);
    expectExit(out, 0);
    expect(out.stdout).toContain('title: "flaky: failed"');
    expect(out.stdout).toContain('n0["prepare ×1"]');
    expect(out.stdout).toContain('class n0 visited');
    expect(out.stdout).toContain('class n1 stopped');
  });
});
