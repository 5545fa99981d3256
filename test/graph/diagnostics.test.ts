import { describe, expect, it } from 'vitest';
import { append, END, type GraphDef, graph, validate } from '../../src/index.js';
import { declare, lines, pass, problem, State } from './support.js';

// One test (or table) per diagnostic code. Each graph has exactly one mistake, and the assertion
// is the whole list of diagnostics, so a missing diagnostic and extra noise both fail.

describe('the entry', () => {
  it('a graph without .entry() is reported as ENTRY_MISSING', () => {
    const builder = declare().node('a', pass).edge('a', END);

    expect(builder.validate()).toEqual([problem('ENTRY_MISSING')]);
  });

  it('an entry that is not a declared node is reported as ENTRY_UNKNOWN with that name', () => {
    // @ts-expect-error the undeclared entry is the mistake under test
    const builder = declare().node('a', pass).edge('a', END).entry('start');

    expect(builder.validate()).toEqual([problem('ENTRY_UNKNOWN', { node: 'start' })]);
  });
});

describe('node names', () => {
  it.each([
    ['an empty string', ''],
    ['a number', 42],
    ['undefined', undefined],
  ])('a node named with %s is reported as NAME_INVALID', (_, name) => {
    const builder = declare()
      .node(name as never, pass)
      .node('a', pass)
      .edge('a', END)
      .entry('a');

    expect(builder.validate()).toEqual([problem('NAME_INVALID')]);
  });

  it('a name declared twice is reported once as NAME_DUPLICATE, and the first declaration is the node', () => {
    const builder = declare()
      .node('a', pass)
      .node('a', pass, { visits: 0 })
      .edge('a', END)
      .entry('a');

    // The second declaration's bad option is not checked: it is not the node that would run.
    expect(builder.validate()).toEqual([problem('NAME_DUPLICATE', { node: 'a' })]);
  });

  it.each(['START', 'END', '__start__'])(
    'a node named %s is reported as NAME_RESERVED, and its edges still resolve',
    (name) => {
      const builder = declare()
        .node(name, pass)
        .node('a', pass)
        .edge(name, 'a')
        .edge('a', END)
        .entry(name);

      expect(builder.validate()).toEqual([problem('NAME_RESERVED', { node: name })]);
    },
  );

  it('a node named like END itself ("__end__") is reported as NAME_RESERVED and edges to END still end the path', () => {
    const builder = declare().node(END, pass).node('a', pass).edge('a', END).entry('a');

    expect(builder.validate()).toEqual([problem('NAME_RESERVED', { node: END })]);
  });
});

describe('static edges', () => {
  it('an edge from a node that does not exist is reported as EDGE_SOURCE_UNKNOWN with the edge', () => {
    const builder = declare()
      .node('a', pass)
      .edge('a', END)
      // @ts-expect-error the unknown source is the mistake under test
      .edge('ghost', END)
      .entry('a');

    expect(builder.validate()).toEqual([
      problem('EDGE_SOURCE_UNKNOWN', { edge: { from: 'ghost', to: END } }),
    ]);
  });

  it('an edge to a node that does not exist is reported as EDGE_TARGET_UNKNOWN with its source node, and the source is not also a dead end', () => {
    const builder = declare()
      .node('a', pass)
      // @ts-expect-error the unknown target is the mistake under test
      .edge('a', 'ghost')
      .entry('a');

    expect(builder.validate()).toEqual([
      problem('EDGE_TARGET_UNKNOWN', { node: 'a', edge: { from: 'a', to: 'ghost' } }),
    ]);
  });

  it('a node with two static edges is reported as EDGE_MULTIPLE: a node continues to one place', () => {
    const builder = declare()
      .node('a', pass)
      .node('b', pass)
      .node('c', pass)
      .edge('a', 'b')
      .edge('a', 'c')
      .edge('b', END)
      .edge('c', END)
      .entry('a');

    expect(builder.validate()).toEqual([problem('EDGE_MULTIPLE', { node: 'a' })]);
  });

  it('an edge to END next to another edge counts as a second static edge', () => {
    const builder = declare()
      .node('a', pass)
      .node('b', pass)
      .edge('a', 'b')
      .edge('a', END)
      .edge('b', END)
      .entry('a');

    expect(builder.validate()).toEqual([problem('EDGE_MULTIPLE', { node: 'a' })]);
  });

  it('a node with both a static edge and a router is reported as EDGE_AND_ROUTE', () => {
    const builder = declare()
      .node('a', pass)
      .node('b', pass)
      .node('c', pass)
      .edge('a', 'b')
      .route('a', () => 'c', ['c'])
      .edge('b', END)
      .edge('c', END)
      .entry('a');

    expect(builder.validate()).toEqual([problem('EDGE_AND_ROUTE', { node: 'a' })]);
  });
});

describe('routers', () => {
  it('a router attached to a node that does not exist is reported as ROUTE_SOURCE_UNKNOWN with that name', () => {
    const builder = declare()
      .node('a', pass)
      .edge('a', END)
      // @ts-expect-error the unknown source is the mistake under test
      .route('ghost', () => END, [END])
      .entry('a');

    expect(builder.validate()).toEqual([problem('ROUTE_SOURCE_UNKNOWN', { node: 'ghost' })]);
  });

  it("a router target that is not a node is reported with the router's node as ROUTE_TARGET_UNKNOWN", () => {
    const builder = declare()
      .node('a', pass)
      .route('a', (s) => (s.done ? END : ('ghost' as never)), [END, 'ghost' as never])
      .entry('a');

    expect(builder.validate()).toEqual([
      problem('ROUTE_TARGET_UNKNOWN', { node: 'a', edge: { from: 'a', to: 'ghost' } }),
    ]);
  });

  it('a router that declares no targets is reported as ROUTE_NO_TARGETS, and not also as a dead end', () => {
    const builder = declare()
      .node('a', pass)
      .route('a', () => END as never, [])
      .entry('a');

    expect(builder.validate()).toEqual([problem('ROUTE_NO_TARGETS', { node: 'a' })]);
  });

  it('a second router on the same node is reported as ROUTE_DUPLICATE, and the nodes only it leads to are not reported unreachable', () => {
    const builder = declare()
      .node('a', pass)
      .node('b', pass)
      .node('c', pass)
      .route('a', () => 'b', ['b'])
      .route('a', () => 'c', ['c'])
      .edge('b', END)
      .edge('c', END)
      .entry('a');

    expect(builder.validate()).toEqual([problem('ROUTE_DUPLICATE', { node: 'a' })]);
  });

  it("a second router's unknown target is reported too", () => {
    const builder = declare()
      .node('a', pass)
      .route('a', () => END, [END])
      .route('a', () => END, [END, 'ghost' as never])
      .entry('a');

    expect(lines(builder.validate())).toEqual([
      'ROUTE_DUPLICATE at a',
      'ROUTE_TARGET_UNKNOWN at a on a -> ghost',
    ]);
  });
});

describe('error routes', () => {
  it('an onError that names no declared node is reported as ON_ERROR_UNKNOWN with the node and the route', () => {
    const builder = declare().node('a', pass, { onError: 'recover' }).edge('a', END).entry('a');

    expect(builder.validate()).toEqual([
      problem('ON_ERROR_UNKNOWN', { node: 'a', edge: { from: 'a', to: 'recover' } }),
    ]);
  });

  it('onError cannot point at END: a failure must be handled by a node', () => {
    const builder = declare().node('a', pass, { onError: END }).edge('a', END).entry('a');

    expect(builder.validate()).toEqual([
      problem('ON_ERROR_UNKNOWN', { node: 'a', edge: { from: 'a', to: END } }),
    ]);
  });
});

describe('misspelled names', () => {
  /** The fix-and-test pipeline of the bug-triage example, with `planFix` as its router's target. */
  const triage = (planFix: string) =>
    graph('triage', { state: State, reducers: { notes: append } })
      .node('reproduce', pass, { visits: 3, onError: 'escalate' })
      .node('retry', pass)
      .node('plan-fix', pass)
      .node('fix-code', pass, { reads: [], writes: ['notes'] })
      .node('update-tests', pass, { reads: [], writes: ['notes'] })
      .node('merge', pass)
      .node('verify', pass)
      .node('done', pass, { terminal: true })
      .node('escalate', pass, { terminal: true })
      .route('reproduce', (s) => (s.done ? 'done' : 'retry'), ['retry', planFix as never, 'done'])
      .edge('retry', 'reproduce')
      .fanOut('plan-fix', ['fix-code', 'update-tests'], 'merge')
      .edge('fix-code', 'merge')
      .edge('update-tests', 'merge')
      .edge('merge', 'verify')
      .route('verify', (s) => (s.done ? 'done' : 'escalate'), ['done', 'escalate'])
      .entry('reproduce');

  it('an unknown route target suggests the closest declared name, and lists the nodes only it would reach instead of reporting each UNREACHABLE', () => {
    expect(triage('plan-fix').validate()).toEqual([]);

    expect(triage('plan-fx').validate()).toEqual([
      {
        ...problem('ROUTE_TARGET_UNKNOWN', {
          node: 'reproduce',
          edge: { from: 'reproduce', to: 'plan-fx' },
        }),
        message:
          'the router of "reproduce" declares an unknown target "plan-fx" (did you mean "plan-fix"?), so 5 nodes cannot be reached: plan-fix, fix-code, update-tests, merge, verify',
        hint: `write "plan-fix" instead of "plan-fx" in the targets of .route('reproduce', ...)`,
        details: {
          suggestion: 'plan-fix',
          unreachable: ['plan-fix', 'fix-code', 'update-tests', 'merge', 'verify'],
        },
      },
    ]);
  });

  it('an unknown edge target suggests the closest declared name, a different case first', () => {
    const chain = (to: string) =>
      declare()
        .node('plan', pass)
        .node('serve', pass)
        .node('search', pass)
        .edge('plan', to as never)
        .edge('serve', END)
        .edge('search', END)
        .entry('plan');

    // "serch" is one edit from "search" and two from "serve"; "Serve" differs only in case.
    const [misspelled, ...others] = chain('serch').validate();
    expect(misspelled).toEqual({
      ...problem('EDGE_TARGET_UNKNOWN', { node: 'plan', edge: { from: 'plan', to: 'serch' } }),
      details: { suggestion: 'search', unreachable: ['search'] },
    });
    expect(misspelled!.hint).toBe(`write "search" instead of "serch" in .edge('plan', ...)`);
    // "serve" is unreachable whatever the name is fixed to: it is reported on its own.
    expect(lines(others)).toEqual(['UNREACHABLE at serve']);
    expect(chain('Serve').validate()[0]!.details).toEqual({
      suggestion: 'serve',
      unreachable: ['serve'],
    });
  });

  it('a node unreachable for another reason is still reported as UNREACHABLE on its own', () => {
    const builder = declare()
      .node('plan', pass)
      .node('search', pass)
      .node('orphan', pass)
      .node('after-orphan', pass)
      .edge('plan', 'serch' as never)
      .edge('search', END)
      .edge('orphan', 'after-orphan')
      .edge('after-orphan', 'search')
      .entry('plan');

    const diagnostics = builder.validate();

    expect(lines(diagnostics)).toEqual([
      'EDGE_TARGET_UNKNOWN at plan on plan -> serch',
      'UNREACHABLE at after-orphan',
      'UNREACHABLE at orphan',
    ]);
    expect(diagnostics[0]!.details).toEqual({ suggestion: 'search', unreachable: ['search'] });
  });

  it('a name close to no declared node gets no suggestion, and what it cut off is reported UNREACHABLE', () => {
    const builder = declare()
      .node('plan', pass)
      .node('search', pass)
      .edge('plan', 'ghost' as never)
      .edge('search', END)
      .entry('plan');

    const diagnostics = builder.validate();

    expect(diagnostics).toEqual([
      problem('EDGE_TARGET_UNKNOWN', { node: 'plan', edge: { from: 'plan', to: 'ghost' } }),
      problem('UNREACHABLE', { node: 'search' }),
    ]);
    expect(diagnostics[0]!.hint).toBe('declare the node, fix the name in .edge(), or use END');
  });

  it('a misspelled onError target suggests the name, and its handler is not reported UNREACHABLE', () => {
    const builder = declare()
      .node('call', pass, { onError: 'recovr' })
      .node('recover', pass, { terminal: true })
      .edge('call', END)
      .entry('call');

    expect(builder.validate()).toEqual([
      {
        ...problem('ON_ERROR_UNKNOWN', { node: 'call', edge: { from: 'call', to: 'recovr' } }),
        details: { suggestion: 'recover', unreachable: ['recover'] },
      },
    ]);
  });

  it('two misspelled edges in a row: each lists the nodes behind it', () => {
    const builder = declare()
      .node('first', pass)
      .node('second', pass)
      .node('third', pass)
      .edge('first', 'secnd' as never)
      .edge('second', 'thrid' as never)
      .edge('third', END)
      .entry('first');

    expect(builder.validate().map((d) => [d.code, d.details])).toEqual([
      ['EDGE_TARGET_UNKNOWN', { suggestion: 'second', unreachable: ['second'] }],
      ['EDGE_TARGET_UNKNOWN', { suggestion: 'third', unreachable: ['third'] }],
    ]);
  });

  it('a suggestion that is reachable anyway cuts nothing off: the diagnostic lists no nodes', () => {
    const builder = declare()
      .node('check', pass)
      .node('accept', pass, { terminal: true })
      .route('check', () => 'accept', ['accept', 'acept' as never])
      .entry('check');

    const [only, ...rest] = builder.validate();

    expect(rest).toEqual([]);
    expect(only!.details).toEqual({ suggestion: 'accept' });
    expect(only!.message).toBe(
      'the router of "check" declares an unknown target "acept" (did you mean "accept"?)',
    );
  });
});

describe('ways out and ways in', () => {
  it('a node with no edge, no router and no terminal flag is reported as DEAD_END', () => {
    const builder = declare().node('a', pass).node('b', pass).edge('a', 'b').entry('a');

    expect(builder.validate()).toEqual([problem('DEAD_END', { node: 'b' })]);
  });

  it('an onError route alone is not a way out: the node is still a dead end when it succeeds', () => {
    const builder = declare()
      .node('a', pass, { onError: 'recover' })
      .node('recover', pass)
      .edge('recover', END)
      .entry('a');

    expect(builder.validate()).toEqual([problem('DEAD_END', { node: 'a' })]);
  });

  it('a node nothing leads to is reported as UNREACHABLE, and so is every node only it leads to', () => {
    const builder = declare()
      .node('a', pass)
      .node('orphan', pass)
      .node('after', pass)
      .edge('a', END)
      .edge('orphan', 'after')
      .edge('after', END)
      .entry('a');

    expect(lines(builder.validate())).toEqual(['UNREACHABLE at after', 'UNREACHABLE at orphan']);
    expect(builder.validate()[0]).toEqual(problem('UNREACHABLE', { node: 'orphan' }));
  });

  it('a loop with a visit cap but no exit to END is reported as TRAP on each of its nodes', () => {
    const builder = declare()
      .node('work', pass, { visits: 3 })
      .node('check', pass)
      .edge('work', 'check')
      .route('check', () => 'work', ['work'])
      .entry('work');

    expect(builder.validate()).toEqual([
      problem('TRAP', { node: 'work' }),
      problem('TRAP', { node: 'check' }),
    ]);
  });

  it('a node whose every path runs into a trap is reported as TRAP too', () => {
    const builder = declare()
      .node('start', pass)
      .node('work', pass, { visits: 3 })
      .edge('start', 'work')
      .route('work', () => 'work', ['work'])
      .entry('start');

    expect(lines(builder.validate())).toEqual(['TRAP at start', 'TRAP at work']);
  });

  it('a graph whose only problem is a trap reports the trap and no unreachable or dead-end noise', () => {
    const builder = declare()
      .node('intake', pass)
      .node('loop', pass, { visits: 5 })
      .node('again', pass)
      .node('finish', pass)
      .route('intake', (s) => (s.done ? 'finish' : 'loop'), ['loop', 'finish'])
      .edge('loop', 'again')
      .route('again', () => 'loop', ['loop'])
      .edge('finish', END)
      .entry('intake');

    expect(lines(builder.validate())).toEqual(['TRAP at again', 'TRAP at loop']);
  });

  it('an unreachable trap is reported as unreachable, not as a trap', () => {
    const builder = declare()
      .node('a', pass)
      .node('x', pass, { visits: 2 })
      .edge('a', END)
      .route('x', () => 'x', ['x'])
      .entry('a');

    expect(builder.validate()).toEqual([problem('UNREACHABLE', { node: 'x' })]);
  });
});

describe('cycles need a visit cap', () => {
  it('a loop with no visit cap on any of its nodes is reported once as CYCLE_UNCAPPED, naming its nodes', () => {
    const builder = declare()
      .node('draft', pass)
      .node('review', pass)
      .edge('draft', 'review')
      .route('review', (s) => (s.done ? END : 'draft'), ['draft', END])
      .entry('draft');

    const diagnostics = builder.validate();

    expect(diagnostics).toEqual([problem('CYCLE_UNCAPPED', { node: 'draft' })]);
    expect(diagnostics[0]!.message).toContain('draft -> review');
  });

  it('a node that routes to itself with no visit cap is an uncapped cycle', () => {
    const builder = declare()
      .node('poll', pass)
      .route('poll', (s) => (s.done ? END : 'poll'), ['poll', END])
      .entry('poll');

    expect(builder.validate()).toEqual([problem('CYCLE_UNCAPPED', { node: 'poll' })]);
  });

  it('a node whose onError points back at itself is an uncapped cycle', () => {
    const builder = declare()
      .node('call', pass, { onError: 'call' })
      .edge('call', END)
      .entry('call');

    expect(builder.validate()).toEqual([problem('CYCLE_UNCAPPED', { node: 'call' })]);
  });

  it('a cap on a node outside the cycle does not count: the uncapped cycle is reported, the capped one is not', () => {
    const builder = declare()
      .node('plan', pass, { visits: 3 })
      .node('search', pass)
      .node('draft', pass)
      .node('review', pass)
      .edge('plan', 'search')
      .route('search', (s) => (s.done ? 'draft' : 'plan'), ['plan', 'draft'])
      .edge('draft', 'review')
      .route('review', (s) => (s.done ? END : 'draft'), ['draft', END])
      .entry('plan');

    expect(builder.validate()).toEqual([problem('CYCLE_UNCAPPED', { node: 'draft' })]);
  });

  it('a cap on an outer loop does not bound an inner loop that skips the capped node', () => {
    const builder = declare()
      .node('a', pass, { visits: 3 })
      .node('b', pass)
      .node('c', pass)
      .edge('a', 'b')
      .edge('b', 'c')
      .route('c', (s) => (s.done ? END : s.notes.length > 0 ? 'b' : 'a'), ['a', 'b', END])
      .entry('a');

    const diagnostics = builder.validate();

    expect(diagnostics).toEqual([problem('CYCLE_UNCAPPED', { node: 'b' })]);
    expect(diagnostics[0]!.message).toContain('b -> c');
  });

  it('a cycle with a visit cap on one of its nodes compiles', () => {
    const builder = declare()
      .node('draft', pass)
      .node('review', pass, { visits: 3 })
      .node('edit', pass)
      .edge('draft', 'review')
      .route('review', (s) => (s.done ? END : 'edit'), ['edit', END])
      .edge('edit', 'draft')
      .entry('draft');

    expect(builder.validate()).toEqual([]);
    expect(() => builder.compile()).not.toThrow();
  });
});

describe('state fields', () => {
  it('a node that reads a field the state does not have is reported as FIELD_UNKNOWN', () => {
    const builder = declare()
      // @ts-expect-error the unknown field is the mistake under test
      .node('a', pass, { reads: ['topic', 'title'] })
      .edge('a', END)
      .entry('a');

    const diagnostics = builder.validate();

    expect(diagnostics).toEqual([problem('FIELD_UNKNOWN', { node: 'a' })]);
    expect(diagnostics[0]!.message).toContain('"title"');
  });

  it('a node that writes a field the state does not have is reported as FIELD_UNKNOWN', () => {
    const builder = declare()
      // @ts-expect-error the unknown field is the mistake under test
      .node('a', pass, { writes: ['summary'] })
      .edge('a', END)
      .entry('a');

    const diagnostics = builder.validate();

    expect(diagnostics).toEqual([problem('FIELD_UNKNOWN', { node: 'a' })]);
    expect(diagnostics[0]!.message).toContain('"summary"');
  });

  it('a reducer for a field the state does not have is reported as FIELD_UNKNOWN with no node', () => {
    // @ts-expect-error the unknown field is the mistake under test
    const builder = graph('g', { state: State, reducers: { notes: append, log: append } })
      .node('a', pass)
      .edge('a', END)
      .entry('a');

    const diagnostics = builder.validate();

    expect(diagnostics).toEqual([problem('FIELD_UNKNOWN')]);
    expect(diagnostics[0]!.message).toContain('"log"');
  });
});

describe('options', () => {
  it.each([
    ['visits: 0', { visits: 0 }],
    ['visits: 1.5', { visits: 1.5 }],
    ['retry.attempts: 0', { retry: { attempts: 0 } }],
    ['retry.factor: 0.5', { retry: { attempts: 3, factor: 0.5 } }],
    ['retry.backoffMs: -1', { retry: { attempts: 3, backoffMs: -1 } }],
    ['retry.maxBackoffMs: -1', { retry: { attempts: 3, maxBackoffMs: -1 } }],
    ['retry.retryOn naming an unknown error class', { retry: { attempts: 3, retryOn: ['flaky'] } }],
    ['retry: null', { retry: null }],
    ['timeoutMs: -1', { timeoutMs: -1 }],
    ['timeoutMs: 0', { timeoutMs: 0 }],
    ['timeoutMs: NaN', { timeoutMs: Number.NaN }],
    // setTimeout fires at once past 2^31-1 ms: the node would time out immediately.
    ['timeoutMs: 3,000,000,000', { timeoutMs: 3_000_000_000 }],
    ['version: 0', { version: 0 }],
    ['an unknown kind', { kind: 'robot' }],
    ['kind: "toString" (a key every object inherits)', { kind: 'toString' }],
  ])('a node declared with %s is reported as OPTION_INVALID', (_, options) => {
    const builder = declare()
      .node('a', pass, options as never)
      .edge('a', END)
      .entry('a');

    expect(builder.validate()).toEqual([problem('OPTION_INVALID', { node: 'a' })]);
  });

  it('the OPTION_INVALID message names the option, its value and the rule', () => {
    const builder = declare().node('a', pass, { timeoutMs: Infinity }).edge('a', END).entry('a');

    expect(builder.validate()[0]!.message).toBe(
      'node "a" has timeoutMs = Infinity; it must be > 0 and at most 2147483647',
    );
  });

  it('a node with several bad options gets one OPTION_INVALID per option', () => {
    const builder = declare()
      .node('a', pass, { visits: 0, timeoutMs: -1, retry: { attempts: 0 } })
      .edge('a', END)
      .entry('a');

    expect(lines(builder.validate())).toEqual([
      'OPTION_INVALID at a',
      'OPTION_INVALID at a',
      'OPTION_INVALID at a',
    ]);
  });

  it('a graph version that is not a whole number >= 1 is reported as OPTION_INVALID with no node', () => {
    const builder = graph('g', { state: State, version: 0 })
      .node('a', pass)
      .edge('a', END)
      .entry('a');

    expect(builder.validate()).toEqual([problem('OPTION_INVALID')]);
  });

  it('reads or writes that are not a list are reported as OPTION_INVALID, not thrown', () => {
    // The builder copies lists, so a malformed one can only come from plain data.
    const def: GraphDef = {
      ...declare().node('a', pass).edge('a', END).entry('a').toDef(),
      nodes: [{ name: 'a', kind: 'code', version: 1, reads: 'topic' as never }],
    };

    expect(validate(def)).toEqual([problem('OPTION_INVALID', { node: 'a' })]);
  });

  it('every option at the edge of its range is accepted', () => {
    const builder = declare()
      .node('a', pass, {
        kind: 'effect',
        visits: 1,
        version: 1,
        timeoutMs: 2_147_483_647,
        retry: {
          attempts: 1,
          backoffMs: 0,
          factor: 1,
          maxBackoffMs: 0,
          retryOn: ['transient', 'permanent', 'timeout', 'cap', 'budget', 'check'],
        },
      })
      .edge('a', END)
      .entry('a');

    expect(builder.validate()).toEqual([]);
  });
});
