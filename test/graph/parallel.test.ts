import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { all, any, append, best, END, graph, quorum, union } from '../../src/index.js';
import { declare, lines, pass, problem, State } from './support.js';

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

describe('the ways into a branch', () => {
  /**
   * The bug-triage pipeline: plan-fix fans out to fix-code (-> review, a loop inside the branch)
   * and update-tests, joined at merge; integration-verify after the join loops back to `again`.
   */
  const triage = (again: string, options: { readonly verifyOnError?: string } = {}) =>
    graph('triage', { state: State, reducers: { notes: append } })
      .node('plan-fix', pass)
      .node('fix-code', pass, { reads: ['topic'], writes: ['notes'], visits: 3 })
      .node('review', pass, { reads: ['notes'], writes: ['notes'] })
      .node('update-tests', pass, { reads: ['topic'], writes: ['notes'] })
      .node('merge', pass)
      .node('integration-verify', pass, {
        visits: 3,
        ...(options.verifyOnError && { onError: options.verifyOnError }),
      })
      .fanOut('plan-fix', ['fix-code', 'update-tests'], 'merge')
      .edge('fix-code', 'review')
      .route('review', (s) => (s.done ? 'merge' : 'fix-code'), ['merge', 'fix-code'])
      .edge('update-tests', 'merge')
      .edge('merge', 'integration-verify')
      .route('integration-verify', (s) => (s.done ? END : (again as never)), [again as never, END])
      .entry('plan-fix');

  it('a loop inside one branch, and a loop from after the join back to the fan-out node, are sound', () => {
    expect(triage('plan-fix').validate()).toEqual([]);
    expect(() => triage('plan-fix').compile()).not.toThrow();
  });

  it('a router target from after the join back into a branch is BRANCH_ENTERED, naming the route and the fan-out node to loop back to', () => {
    expect(triage('fix-code').validate()).toEqual([
      {
        ...problem('BRANCH_ENTERED', {
          node: 'integration-verify',
          edge: { from: 'integration-verify', to: 'fix-code' },
        }),
        message:
          'router target integration-verify -> fix-code enters branch "fix-code" of the fan-out at "plan-fix" from outside it: "fix-code" would run outside the fan-out, and its join "merge" as an ordinary node',
        hint: 'point it at the fan-out node "plan-fix" instead: a branch runs only when its fan-out starts it',
        details: { fanOut: 'plan-fix', join: 'merge', via: 'route' },
      },
    ]);
    expect(() => triage('fix-code').compile()).toThrow(/BRANCH_ENTERED/);
  });

  it('a link into a node deeper in the branch than its entry is BRANCH_ENTERED too', () => {
    expect(lines(triage('review').validate())).toEqual([
      'BRANCH_ENTERED at integration-verify on integration-verify -> review',
    ]);
  });

  it('an onError route from outside into a branch is BRANCH_ENTERED, saying so', () => {
    const problems = triage('plan-fix', { verifyOnError: 'update-tests' }).validate();

    expect(lines(problems)).toEqual([
      'BRANCH_ENTERED at integration-verify on integration-verify -> update-tests',
    ]);
    expect(problems[0]!.details).toEqual({ fanOut: 'plan-fix', join: 'merge', via: 'onError' });
    expect(problems[0]!.message).toMatch(
      /^onError route integration-verify -> update-tests enters/,
    );
  });

  it('a static edge that skips the fan-out node into a branch is BRANCH_ENTERED', () => {
    const problems = graph('g', { state: State, reducers: { notes: append } })
      .node('intake', pass)
      .node('plan', pass)
      .node('fix', pass, { reads: [], writes: ['notes'] })
      .node('tests', pass, { reads: [], writes: ['notes'] })
      .node('merge', pass)
      .route('intake', (s) => (s.done ? 'fix' : 'plan'), ['plan', 'fix'])
      .fanOut('plan', ['fix', 'tests'], 'merge')
      .edge('fix', 'merge')
      .edge('tests', 'merge')
      .edge('merge', END)
      .entry('intake')
      .validate();

    expect(lines(problems)).toEqual(['BRANCH_ENTERED at intake on intake -> fix']);
  });

  it('a run whose entry is a node of a branch is BRANCH_ENTERED, with no edge', () => {
    const problems = graph('g', { state: State, reducers: { notes: append } })
      .node('plan', pass, { visits: 2 })
      .node('fix', pass, { reads: [], writes: ['notes'] })
      .node('merge', pass)
      .fanOut('plan', ['fix'], 'merge')
      .edge('fix', 'merge')
      .route('merge', (s) => (s.done ? END : 'plan'), ['plan', END])
      .entry('fix')
      .validate();

    expect(problems).toEqual([
      {
        ...problem('BRANCH_ENTERED', { node: 'fix' }),
        details: { fanOut: 'plan', join: 'merge', via: 'entry' },
      },
    ]);
    expect(problems[0]!.hint).toBe(
      'start the run at the fan-out node "plan" or a node before it: a branch runs only when its fan-out starts it',
    );
  });

  it('a loop from after the join of a map back into its branch is BRANCH_ENTERED, naming the map', () => {
    const Files = z.object({ files: z.array(z.string()), findings: z.array(z.string()) });
    const audit = (again: 'list' | 'audit') =>
      graph('audit', { state: Files, reducers: { findings: append } })
        .node('list', pass)
        .node('audit', pass, { reads: ['files'], writes: ['findings'] })
        .node('collect', pass, { visits: 3 })
        .map('list', { over: 'files', branch: 'audit', join: 'collect' })
        .edge('audit', 'collect')
        .route('collect', (s) => (s.findings.length > 0 ? END : again), [again, END])
        .entry('list')
        .validate();

    expect(audit('list')).toEqual([]);
    const problems = audit('audit');
    expect(lines(problems)).toEqual(['BRANCH_ENTERED at collect on collect -> audit']);
    expect(problems[0]!.message).toContain('enters branch "audit" of the map at "list"');
  });

  it('a branch that escapes to a node after its join is BRANCH_ESCAPES alone: the ways into that node are not also reported', () => {
    const problems = graph('g', { state: State, reducers: { notes: append } })
      .node('plan', pass)
      .node('fix', pass, { reads: ['done'], writes: ['notes'] })
      .node('merge', pass)
      .node('verify', pass)
      .fanOut('plan', ['fix'], 'merge')
      .route('fix', (s) => (s.done ? 'verify' : 'merge'), ['merge', 'verify'])
      .edge('merge', 'verify')
      .edge('verify', END)
      .entry('plan')
      .validate();

    expect(lines(problems)).toEqual([
      'BRANCH_ESCAPES at verify',
      'READS_UNDECLARED at verify',
      'WRITES_UNDECLARED at verify',
    ]);
  });
});

describe('onError inside a branch', () => {
  const fixed = (onError: string | undefined) =>
    graph('g', { state: State, reducers: { notes: append } })
      .node('triage', pass)
      .node('fix', pass, {
        reads: [],
        writes: ['notes'],
        ...(onError !== undefined && { onError }),
      })
      .node('recover', pass, { reads: [], writes: ['notes'] })
      .node('tests', pass, { reads: [], writes: ['notes'] })
      .node('merge', pass, { join: all(), tolerate: 1 })
      .fanOut('triage', ['fix', 'tests'], 'merge')
      .edge('fix', 'merge')
      .edge('recover', 'merge')
      .edge('tests', 'merge')
      .edge('merge', END)
      .entry('triage');

  it('a branch node of a fan-out whose onError is the join is refused as ON_ERROR_TO_JOIN, with the fix that says what a failure does without it', () => {
    const problems = fixed('merge').validate();

    // "recover" is reached by nothing: only the variant below routes errors to it.
    expect(problems.filter((p) => p.code !== 'UNREACHABLE')).toEqual([
      {
        ...problem('ON_ERROR_TO_JOIN', { node: 'fix', edge: { from: 'fix', to: 'merge' } }),
        message:
          'onError of "fix" points at "merge", the join of its fan-out at "triage": the error would run "merge" as an ordinary node, outside its barrier, and every branch\'s update would be lost',
        hint: 'remove the onError: a failure then fails the branch, and the tolerate of "merge" decides whether the join goes on (to handle it, route it to a node of the branch that leads to "merge")',
        details: { fanOut: 'triage', join: 'merge', via: 'onError' },
      },
    ]);
    expect(() => fixed('merge').compile()).toThrow(/ON_ERROR_TO_JOIN/);
  });

  it('an onError to a node of the branch that leads to the join is sound', () => {
    expect(fixed('recover').validate()).toEqual([]);
  });

  it('a branch node of a map whose onError is the join is refused as ON_ERROR_TO_JOIN', () => {
    const Files = z.object({ files: z.array(z.string()), findings: z.array(z.string()) });
    const map = (onError: boolean) =>
      graph('audit', { state: Files, reducers: { findings: append } })
        .node('list', pass)
        .node('read', pass, { reads: ['files'], writes: ['findings'] })
        .node('audit', pass, {
          reads: ['files'],
          writes: ['findings'],
          ...(onError && { onError: 'collect' }),
        })
        .node('collect', pass, { tolerate: '10%' })
        .map('list', { over: 'files', branch: 'read', join: 'collect' })
        .edge('read', 'audit')
        .edge('audit', 'collect')
        .edge('collect', END)
        .entry('list');

    expect(map(false).validate()).toEqual([]);
    const problems = map(true).validate();
    expect(lines(problems)).toEqual(['ON_ERROR_TO_JOIN at audit on audit -> collect']);
    expect(problems[0]!.message).toContain('the join of its map at "list"');
  });
});
