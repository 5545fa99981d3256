import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { any, append, best, END, graph, quorum, union } from '../../src/index.js';
import { declare, lines, pass, State } from './support.js';

/** triage -> {fix, tests} -> merge -> END, with the given branch writes and reducers. */
const pipeline = (
  fixWrites: readonly ('notes' | 'done')[] | undefined,
  testsWrites: readonly ('notes' | 'done')[] | undefined,
  withAppend = false,
) =>
  graph('g', { state: State, reducers: withAppend ? { notes: append } : {} })
    .node('triage', pass)
    .node('fix', pass, fixWrites === undefined ? { reads: [] } : { reads: [], writes: fixWrites })
    .node(
      'tests',
      pass,
      testsWrites === undefined ? { reads: [] } : { reads: [], writes: testsWrites },
    )
    .node('merge', pass)
    .fanOut('triage', ['fix', 'tests'], 'merge')
    .edge('fix', 'merge')
    .edge('tests', 'merge')
    .edge('merge', END)
    .entry('triage');

describe('validating fan-outs', () => {
  it('accepts branches that write different fields, or the same field through a reducer', () => {
    expect(pipeline(['notes'], ['done']).validate()).toEqual([]);
    expect(pipeline(['notes'], ['notes'], true).validate()).toEqual([]);
  });

  it('reports each field two branches can both write without a reducer, once per pair', () => {
    const problems = pipeline(['notes', 'done'], ['notes', 'done']).validate();
    expect(lines(problems)).toEqual(['WRITE_CONFLICT at triage', 'WRITE_CONFLICT at triage']);
    expect(problems.map((p) => p.message)).toEqual([
      'branches "fix" and "tests" of the fan-out at "triage" can both write "notes", which has no reducer',
      'branches "fix" and "tests" of the fan-out at "triage" can both write "done", which has no reducer',
    ]);
  });

  it('treats a branch node without writes as writing everything', () => {
    const problems = pipeline(undefined, ['notes', 'done'], true).validate();
    // notes has a reducer; done does not, and "fix" may write it.
    expect(problems.map((p) => p.message)).toEqual([
      'branches "fix" and "tests" of the fan-out at "triage" can both write "done", which has no reducer',
      'node "fix" runs in a parallel branch and declares no writes, so it may write any field',
    ]);
    expect(
      pipeline(undefined, undefined)
        .validate()
        .map((p) => p.message),
    ).toEqual([
      'branches "fix" and "tests" of the fan-out at "triage" both declare no writes, so they may write the same fields',
      'node "fix" runs in a parallel branch and declares no writes, so it may write any field',
      'node "tests" runs in a parallel branch and declares no writes, so it may write any field',
    ]);
  });

  describe('branches that declare no writes, when every state field has a reducer', () => {
    // Every field merges through a reducer: whatever the branches write, the join can combine it.
    const Reduced = z.object({
      notes: z.array(z.string()).default([]),
      tags: z.array(z.string()).default([]),
    });
    const reducers = (all: boolean) => (all ? { notes: append, tags: union } : { notes: append });
    const fixedBuilder = (all: boolean) =>
      graph('g', { state: Reduced, reducers: reducers(all) })
        .node('triage', pass)
        .node('fix', pass, { reads: [] })
        .node('tests', pass, { reads: [] })
        .node('merge', pass)
        .fanOut('triage', ['fix', 'tests'], 'merge')
        .edge('fix', 'merge')
        .edge('tests', 'merge')
        .edge('merge', END)
        .entry('triage');
    const fixed = (all: boolean) => fixedBuilder(all).validate();
    const map = (all: boolean) =>
      graph('g', { state: Reduced, reducers: reducers(all) })
        .node('list', pass)
        .node('each', pass, { reads: ['notes'] })
        .node('collect', pass)
        .map('list', { over: 'notes', branch: 'each', join: 'collect' })
        .edge('each', 'collect')
        .edge('collect', END)
        .entry('list')
        .validate();

    it('a fixed fan-out gets only the WRITES_UNDECLARED warnings, no WRITE_CONFLICT', () => {
      expect(lines(fixed(true))).toEqual([
        'WRITES_UNDECLARED at fix',
        'WRITES_UNDECLARED at tests',
      ]);
      expect(lines(fixed(false))).toEqual([
        'WRITES_UNDECLARED at fix',
        'WRITES_UNDECLARED at tests',
        'WRITE_CONFLICT at triage',
      ]);
    });

    it('a map gets only the WRITES_UNDECLARED warning, no WRITE_CONFLICT', () => {
      expect(lines(map(true))).toEqual(['WRITES_UNDECLARED at each']);
      expect(lines(map(false))).toEqual(['WRITES_UNDECLARED at each', 'WRITE_CONFLICT at list']);
    });

    it('the graph compiles', () => {
      expect(() => fixedBuilder(true).compile()).not.toThrow();
    });
  });

  it('does not report write conflicts for joins that keep one branch (any, best)', () => {
    const withJoin = (
      join: ReturnType<typeof any> | ReturnType<typeof best<z.output<typeof State>>>,
    ) =>
      declare()
        .node('ask', pass)
        .node('a', pass, { reads: [], writes: ['notes'] })
        .node('b', pass, { reads: [], writes: ['notes'] })
        .node('pick', pass, { join })
        .fanOut('ask', ['a', 'b'], 'pick')
        .edge('a', 'pick')
        .edge('b', 'pick')
        .edge('pick', END)
        .entry('ask')
        .validate();
    expect(withJoin(any())).toEqual([]);
    expect(withJoin(best((s) => s.notes.length))).toEqual([]);
  });

  it('reports a map whose branch writes a field without a reducer: every item runs it at once', () => {
    const Files = z.object({
      files: z.array(z.string()),
      findings: z.array(z.string()).default([]),
    });
    const map = (withReducer: boolean) =>
      graph('audit', { state: Files, reducers: withReducer ? { findings: append } : {} })
        .node('list', pass)
        .node('audit', pass, { reads: ['files'], writes: ['findings'] })
        .node('collect', pass)
        .map('list', { over: 'files', branch: 'audit', join: 'collect', concurrency: 4 })
        .edge('audit', 'collect')
        .edge('collect', END)
        .entry('list')
        .validate();
    expect(lines(map(false))).toEqual(['WRITE_CONFLICT at list']);
    expect(map(true)).toEqual([]);
  });

  it("counts a fan-out as the node's way out, and its branches as reachable", () => {
    const problems = pipeline(['notes'], ['done']).validate();
    expect(problems.filter((p) => p.code === 'DEAD_END' || p.code === 'UNREACHABLE')).toEqual([]);
  });

  it('reports a quorum larger than the fixed branch count, and a bad concurrency or tolerance', () => {
    const problems = declare()
      .node('ask', pass)
      .node('a', pass, { reads: [], writes: ['notes'] })
      .node('agree', pass, { join: quorum(2), tolerate: '150%' })
      .fanOut('ask', ['a'], 'agree', { concurrency: 0 })
      .edge('a', 'agree')
      .edge('agree', END)
      .entry('ask')
      .validate();
    expect(lines(problems)).toEqual([
      'OPTION_INVALID at agree',
      'OPTION_INVALID at ask',
      'QUORUM_TOO_LARGE at agree',
    ]);
  });

  it('requires every loop through a fan-out to carry a visit cap', () => {
    const loop = (visits: number | undefined) =>
      graph('g', { state: State, reducers: { notes: append } })
        .node('plan', pass, visits === undefined ? {} : { visits })
        .node('a', pass, { reads: ['done'], writes: ['notes'] })
        .node('merge', pass)
        .fanOut('plan', ['a'], 'merge')
        .edge('a', 'merge')
        .route('merge', (s) => (s.done ? END : 'plan'), ['plan', END])
        .entry('plan')
        .validate();
    expect(lines(loop(undefined))).toEqual(['CYCLE_UNCAPPED at plan']);
    expect(loop(3)).toEqual([]);
  });

  it('reports a branch that routes to its own fan-out node as escaping', () => {
    const problems = graph('g', { state: State, reducers: { notes: append } })
      .node('plan', pass, { visits: 3 })
      .node('a', pass, { reads: ['done'], writes: ['notes'] })
      .node('merge', pass)
      .fanOut('plan', ['a'], 'merge')
      .route('a', (s) => (s.done ? 'merge' : 'plan'), ['merge', 'plan'])
      .edge('merge', END)
      .entry('plan')
      .validate();
    expect(lines(problems)).toEqual(['BRANCH_ESCAPES at plan']);
  });
});
