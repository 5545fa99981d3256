import { describe, expect, it } from 'vitest';
import bugTriage from '../../examples/bug-triage/graph.js';
import { type GraphDef, validate } from '../../src/index.js';
import { lines } from './support.js';

// The mistakes a new user made in a bug-triage graph of their own, replayed on the example's
// declaration: each one is a single change to a sound graph, and each is caught before it runs.
const sound: GraphDef = bugTriage.def;

/** The example's declaration with one router's targets replaced. */
const rerouted = (from: string, targets: readonly string[]): GraphDef => ({
  ...sound,
  routes: sound.routes.map((r) => (r.from === from ? { ...r, targets } : r)),
});

describe('the bug-triage graph with the mistakes of the trial', () => {
  it('is sound as shipped', () => {
    expect(validate(sound)).toEqual([]);
  });

  it('verify looping back to fix-code, a branch of the plan-fix fan-out, is BRANCH_ENTERED: loop back to plan-fix', () => {
    // A loop needs a visit cap somewhere: on verify, in the mistake and in its fix alike.
    const loop = (to: string): GraphDef => {
      const def = rerouted('verify', ['escalate', 'approve', 'done', to]);
      return {
        ...def,
        nodes: def.nodes.map((n) => (n.name === 'verify' ? { ...n, visits: 3 } : n)),
      };
    };

    const problems = validate(loop('fix-code'));

    expect(lines(problems)).toEqual(['BRANCH_ENTERED at verify on verify -> fix-code']);
    expect(problems[0]!.hint).toBe(
      'point it at the fan-out node "plan-fix" instead: a branch runs only when its fan-out starts it',
    );
    expect(validate(loop('plan-fix'))).toEqual([]);
  });

  it('fix-code handing its errors to the merge join is ON_ERROR_TO_JOIN', () => {
    const problems = validate({
      ...sound,
      nodes: sound.nodes.map((n) => (n.name === 'fix-code' ? { ...n, onError: 'merge' } : n)),
    });

    expect(lines(problems)).toEqual(['ON_ERROR_TO_JOIN at fix-code on fix-code -> merge']);
  });

  it('a misspelled "plan-fx" target suggests plan-fix, and carries what it cut off instead of one UNREACHABLE each', () => {
    const problems = validate(rerouted('reproduce', ['retry', 'backfill', 'plan-fx', 'done']));

    expect(lines(problems)).toEqual(['ROUTE_TARGET_UNKNOWN at reproduce on reproduce -> plan-fx']);
    expect(problems[0]!.message).toContain('did you mean "plan-fix"?');
    expect(problems[0]!.details).toEqual({
      suggestion: 'plan-fix',
      unreachable: ['plan-fix', 'fix-code', 'update-tests', 'merge', 'verify', 'approve'],
    });
  });
});
