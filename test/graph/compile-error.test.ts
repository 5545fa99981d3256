import { describe, expect, it } from 'vitest';
import { type Diagnostic, END, validate } from '../../src/index.js';
import { compileError, declare, lines, pass } from './support.js';

describe('compile() reports every problem in one error', () => {
  it("a 6-node graph in which one edge is pointed at a misspelled node and another node's only exit is removed: the validator reports the unknown target with the name it was meant for and the node only it led to, the dead end, and the node the dead end cut off, in one error", () => {
    // The sound graph: intake routes to research or draft; research -> summarize -> draft ->
    // review -> publish -> END. Two mistakes: research's edge names "sumarize", and review's
    // only edge (to publish) is missing.
    const builder = declare('article')
      .node('intake', pass)
      .node('research', pass)
      .node('summarize', pass)
      .node('draft', pass)
      .node('review', pass)
      .node('publish', pass)
      .route('intake', (s) => (s.notes.length > 0 ? 'draft' : 'research'), ['research', 'draft'])
      // @ts-expect-error the misspelled target is the mistake under test
      .edge('research', 'sumarize')
      .edge('summarize', 'draft')
      .edge('draft', 'review')
      .edge('publish', END)
      .entry('intake');

    const error = compileError(() => builder.compile());
    const details = error.details as Diagnostic[];

    expect(error.code).toBe('GRAPH_INVALID');
    expect(lines(details)).toEqual([
      'DEAD_END at review',
      'EDGE_TARGET_UNKNOWN at research on research -> sumarize',
      // publish is cut off by the missing edge, which fixing the name would not restore.
      'UNREACHABLE at publish',
    ]);
    // summarize was reached only through the misspelled edge: it is reported under it.
    expect(details.find((d) => d.code === 'EDGE_TARGET_UNKNOWN')).toEqual({
      code: 'EDGE_TARGET_UNKNOWN',
      severity: 'error',
      node: 'research',
      edge: { from: 'research', to: 'sumarize' },
      message:
        'edge research -> sumarize points at an unknown node "sumarize" (did you mean "summarize"?), so "summarize" cannot be reached',
      hint: `write "summarize" instead of "sumarize" in .edge('research', ...)`,
      details: { suggestion: 'summarize', unreachable: ['summarize'] },
    });
  });

  it('the error carries every diagnostic as data, and its message names each code', () => {
    const builder = declare('messy')
      .node('a', pass, { visits: 0 })
      .node('b', pass)
      .node('a', pass)
      // @ts-expect-error the unknown target is one of the mistakes under test
      .edge('a', 'ghost')
      .entry('a');

    const error = compileError(() => builder.compile());
    const details = error.details as Diagnostic[];

    expect(error.code).toBe('GRAPH_INVALID');
    expect(error.retryable).toBe(false);
    expect(error.errorClass).toBe('permanent');
    expect(details).toEqual(validate(builder.toDef()));
    expect(lines(details)).toEqual([
      'DEAD_END at b',
      'EDGE_TARGET_UNKNOWN at a on a -> ghost',
      'NAME_DUPLICATE at a',
      'OPTION_INVALID at a',
      'UNREACHABLE at b',
    ]);
    expect(error.message).toMatch(/^GRAPH_INVALID: graph "messy" has 5 problem\(s\)/);
    for (const d of details) expect(error.message).toContain(`${d.code} ${d.message}`);
  });

  it('each line of the message gives the fix next to the problem', () => {
    // @ts-expect-error the unknown entry is the mistake under test
    const error = compileError(() => declare().node('a', pass).edge('a', END).entry('b').compile());
    const [only] = error.details as Diagnostic[];

    expect(error.message.split('\n').slice(1)).toEqual([
      `  ENTRY_UNKNOWN ${only!.message} (fix: ${only!.hint})`,
    ]);
  });

  it('validate() returns the same diagnostics in the same order every time', () => {
    const builder = declare()
      .node('a', pass)
      .node('b', pass)
      .node('c', pass)
      .edge('b', 'c')
      .route('c', () => 'b', ['b'])
      .entry('a');

    const first = builder.validate();

    expect(first.length).toBeGreaterThan(2);
    expect(builder.validate()).toEqual(first);
    expect(validate(JSON.parse(JSON.stringify(builder.toDef())))).toEqual(first);
  });

  it('a sound graph compiles and validate() returns an empty list', () => {
    const builder = declare().node('a', pass).edge('a', END).entry('a');

    expect(builder.validate()).toEqual([]);
    expect(builder.compile().entry).toBe('a');
  });
});
