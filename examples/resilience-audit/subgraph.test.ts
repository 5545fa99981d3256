import { describe, expect, it } from 'vitest';
import { loadTrace, nestTrace, resume, run, validate } from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';
import { dyingAt } from '../../test/support/stores.js';
import { resilienceAudit } from './graph.js';
import input from './input.json' with { type: 'json' };

// The same audit with the per-file audit as a subgraph mapped over the files (file-audit.ts):
// read -> (audit | gap) per file, under the path `audit/…`, with the same answers.
const bySubgraph = () => resilienceAudit({ perFile: 'subgraph' });
const { files } = input;

describe('the resilience audit with the per-file audit as a subgraph', () => {
  it('compiles with no diagnostics, the child validated under its path', () => {
    const g = bySubgraph();

    expect(validate(g.def)).toEqual([]);
    expect(g.def.subgraphs?.map((s) => [s.name, s.graph.name])).toEqual([['audit', 'file-audit']]);
    expect([...g.nodes.keys()]).toContain('audit/audit');
  });

  it('reaches the state the one-node auditor reaches, with each file audited inside the child', async () => {
    const flat = await run(resilienceAudit(), input);
    const nested = await run(bySubgraph(), input);

    expect(nested.status).toBe('succeeded');
    // The child's private slot is the runtime's: the result's state is exactly the flat one's.
    expect(Object.hasOwn(nested.state, '@audit')).toBe(false);
    expect(nested.state).toEqual(flat.state);
    // Three files at a time, so the child steps interleave: counted, not ordered.
    const inChild = nested.trace.path.filter((n) => n.startsWith('audit/'));
    expect(inChild.filter((n) => n === 'audit/read')).toHaveLength(files.length);
    expect(inChild.filter((n) => n === 'audit/audit')).toHaveLength(files.length);
  });

  it('quarantines uncitable findings under the child node that checked them', async () => {
    const result = await run(bySubgraph(), input);

    expect(result.quarantine).toContainEqual({
      node: 'audit/audit',
      activation: 'plan:1[1]/audit/audit:1',
      output: {
        file: 'src/jobs/retry.ts',
        line: 999,
        claim: 'retry loop with no cap: deliverCapped never gives up',
        evidence: 'for (let attempt = 1; ; attempt++) {',
      },
      reasons: ['line-out-of-range'],
    });
    expect(result.state.tally).toMatchObject({ findings: 13, quarantined: 3 });
  });

  it("routes a missing file to the child's gap node: a coverage gap, and no auditor asked", async () => {
    const result = await run(bySubgraph(), { ...input, faults: { missingFile: true } });

    expect(result.status).toBe('succeeded');
    expect(result.state.gaps).toEqual([
      {
        file: 'src/payments/gateway.ts',
        status: 'unreadable',
        findings: 0,
        detail: 'file-not-found',
      },
    ]);
    expect(result.trace.path).toContain('audit/gap');
  });

  it('nests each file under its own entry of the subgraph in the trace', async () => {
    const result = await run(bySubgraph(), input);
    const groups = nestTrace(result.trace.entries).flatMap((n) =>
      n.kind === 'subgraph' ? [n.activation] : [],
    );

    expect(groups).toEqual(files.map((_f, i) => `plan:1[${i}]/audit:1`));
  });

  it('a crash inside a file audit resumes from SQLite without auditing a finished file again', async () => {
    const store = new SqliteStore({ path: ':memory:' });
    const g = bySubgraph();
    await run(g, input, { store: dyingAt(store, 6), runId: 'crashed' }).catch(() => 'died');
    const before = (await loadTrace(store, 'crashed')).entries.filter(
      (e) => e.status === 'succeeded',
    );

    const resumed = await resume(store, g, 'crashed');

    expect(resumed.status).toBe('succeeded');
    const again = resumed.trace.entries.filter((e) =>
      before.some((b) => b.activation === e.activation),
    );
    expect(again).toEqual([]);
    expect(resumed.state.tally).toMatchObject({ findings: 13, quarantined: 3 });
    await store.close();
  });
});
