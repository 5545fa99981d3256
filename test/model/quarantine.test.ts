import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { END, graph, run } from '../../src/index.js';
import { model, scriptedModel } from '../../src/model/index.js';
import { stores } from '../support/stores.js';

// The pinned example: an auditor model proposes findings about files in state; a
// deterministic check per finding keeps the ones that cite a real line of a real file with
// evidence, and sets the others aside with machine-readable reasons.

const Finding = z.object({
  file: z.string(),
  line: z.number().int(),
  evidence: z.string(),
});
const State = z.object({
  files: z.record(z.string(), z.string()),
  findings: z.array(Finding).default([]),
  summary: z.string().default(''),
});
type S = z.output<typeof State>;
type F = z.output<typeof Finding>;

const source = Array.from({ length: 34 }, (_, i) => `line ${i + 1}`).join('\n');

function findingReasons(f: F, s: Readonly<S>): string[] {
  const text = s.files[f.file];
  const reasons: string[] = [];
  if (text === undefined) reasons.push('file-not-found');
  else if (f.line < 1 || f.line > text.split('\n').length) reasons.push('line-out-of-range');
  if (f.evidence.trim() === '') reasons.push('evidence-empty');
  return reasons;
}

const proposed = {
  findings: [
    { file: 'src/auth.ts', line: 12, evidence: 'token compared with ==' },
    { file: 'src/auth.ts', line: 999, evidence: 'unchecked return' },
    { file: 'src/Auth.ts', line: 3, evidence: '' },
  ],
  summary: 'three findings',
};

function audit(m = scriptedModel([{ object: proposed }])) {
  return graph('audit', { state: State })
    .node(
      'audit',
      model({
        model: m,
        prompt: (s) => `Audit these files:\n${Object.keys(s.files).join('\n')}`,
        output: z.object({ findings: z.array(Finding), summary: z.string() }),
        checkItems: { findings: findingReasons },
      }),
      { kind: 'model', writes: ['findings', 'summary'] },
    )
    .edge('audit', END)
    .entry('audit')
    .compile();
}

describe.each(stores)('checks and quarantine, with the %s store', (_name, makeStore) => {
  it('a finding at line 999 of a 34-line file and one with a wrong-case path and empty evidence land in quarantine with their reasons; the valid one is kept', async () => {
    const result = await run(audit(), { files: { 'src/auth.ts': source } }, { store: makeStore() });

    expect(result.status).toBe('succeeded');
    expect(result.state.findings).toEqual([proposed.findings[0]]);
    expect(result.state.summary).toBe('three findings');
    expect(result.quarantine).toEqual([
      {
        node: 'audit',
        activation: 'audit:1',
        output: proposed.findings[1],
        reasons: ['line-out-of-range'],
      },
      {
        node: 'audit',
        activation: 'audit:1',
        output: proposed.findings[2],
        reasons: ['file-not-found', 'evidence-empty'],
      },
    ]);
  });
});

describe('a whole-output check', () => {
  it('quarantines the whole output with its reasons, and the node updates nothing', async () => {
    const m = scriptedModel([{ object: { findings: [], summary: '' } }]);
    const g = graph('audit', { state: State })
      .node(
        'audit',
        model({
          model: m,
          prompt: () => 'Audit.',
          output: z.object({ findings: z.array(Finding), summary: z.string() }),
          check: (o) => (o.summary === '' ? ['summary-empty'] : []),
        }),
        { kind: 'model' },
      )
      .edge('audit', END)
      .entry('audit')
      .compile();

    const result = await run(g, { files: {}, summary: 'before' });

    expect(result.status).toBe('succeeded');
    expect(result.state.summary).toBe('before');
    expect(result.quarantine).toEqual([
      {
        node: 'audit',
        activation: 'audit:1',
        output: { findings: [], summary: '' },
        reasons: ['summary-empty'],
      },
    ]);
  });

  it('sees only the items that passed, and an update mapper gets the same', async () => {
    const seen: unknown[] = [];
    const g = graph('audit', { state: State })
      .node(
        'audit',
        model({
          model: scriptedModel([{ object: proposed }]),
          prompt: () => 'Audit.',
          output: z.object({ findings: z.array(Finding), summary: z.string() }),
          checkItems: { findings: findingReasons },
          check: (o) => {
            seen.push(o.findings.length);
            return [];
          },
          update: (o) => ({ summary: `${o.findings.length} kept` }),
        }),
        { kind: 'model', writes: ['summary'] },
      )
      .edge('audit', END)
      .entry('audit')
      .compile();

    const result = await run(g, { files: { 'src/auth.ts': source } });

    expect(seen).toEqual([1]);
    expect(result.state.summary).toBe('1 kept');
    expect(result.state.findings).toEqual([]);
    expect(result.quarantine).toHaveLength(2);
  });
});

describe("a model node's update", () => {
  it('learns which model answered and what the checks set aside, so it can count it in state', async () => {
    const Counted = State.extend({ reported: z.number().default(0), by: z.string().default('') });
    const g = graph('audit', { state: Counted })
      .node(
        'audit',
        model({
          model: scriptedModel([{ object: proposed }], { modelId: 'auditor' }),
          prompt: () => 'Audit these files.',
          output: z.object({ findings: z.array(Finding), summary: z.string() }),
          checkItems: {
            findings: (f, s, _i, ctx) => (ctx.node === 'audit' ? findingReasons(f, s) : ['?']),
          },
          update: (output, _s, call) => ({
            findings: output.findings,
            reported: output.findings.length + call.quarantined.length,
            by: call.model,
          }),
        }),
        { writes: ['findings', 'reported', 'by'] },
      )
      .edge('audit', END)
      .entry('audit')
      .compile();

    const result = await run(g, { files: { 'src/auth.ts': source } });

    expect(result.state.findings).toHaveLength(1);
    expect(result.state.reported).toBe(3);
    expect(result.state.by).toBe('scripted:auditor');
  });
});
