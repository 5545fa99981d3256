import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { all, graph, type NodeOptions, patches, workspacePatch } from '../../src/index.js';

const State = z.object({ code: workspacePatch(), log: z.array(z.string()).default([]) });
const work = async () => ({});

/** plan -> (fix | tests) -> merge, with the join and the branches' workspace options given. */
function fanOut(join: NodeOptions<z.infer<typeof State>>, branch: object = {}) {
  const workspace = { repo: '.', patch: 'code' as const };
  return graph('g', { state: State })
    .node('plan', work)
    .node('fix', work, { workspace, reads: [], writes: [], ...branch })
    .node('tests', work, { workspace, reads: [], writes: [], ...branch })
    .node('merge', work, { terminal: true, ...join })
    .fanOut('plan', ['fix', 'tests'], 'merge')
    .edge('fix', 'merge')
    .edge('tests', 'merge')
    .entry('plan');
}

describe('validating workspaces', () => {
  it('lets branches that all write their patch field meet at a patches() join', () => {
    expect(fanOut({ join: patches(), workspace: { repo: '.', patch: 'code' } }).validate()).toEqual(
      [],
    );
  });

  it('adds the patch field to what a workspace node declares it reads and writes', () => {
    const def = fanOut({ join: patches(), workspace: { repo: '.', patch: 'code' } }).toDef();
    const fix = def.nodes.find((n) => n.name === 'fix')!;
    expect(fix.reads).toEqual(['code']);
    expect(fix.writes).toEqual(['code']);
    expect(fix.workspace).toEqual({ repo: '.', patch: 'code' });
  });

  it('reports WRITE_CONFLICT when workspace branches meet at an all() join: their patches need merging', () => {
    const codes = fanOut({ join: all() })
      .validate()
      .map((d) => [d.code, d.message]);
    expect(codes).toContainEqual([
      'WRITE_CONFLICT',
      'branches "fix" and "tests" of the fan-out at "plan" can both write "code", which has no reducer',
    ]);
  });

  it('reports a patches() join without a workspace of its own as OPTION_INVALID', () => {
    const found = fanOut({ join: patches() }).validate();
    expect(found.map((d) => d.code)).toContain('OPTION_INVALID');
    expect(found.find((d) => d.code === 'OPTION_INVALID')?.message).toContain(
      'declare its workspace',
    );
  });

  it('reports a workspace option that is not a repository and a field as OPTION_INVALID, and an unknown field as FIELD_UNKNOWN', () => {
    const bad = graph('g', { state: State })
      .node('a', work, {
        workspace: { repo: '', base: '', patch: 'nope' as 'code', keepFailedMs: -1 },
        reads: [],
        terminal: true,
      })
      .entry('a')
      .validate();
    expect(bad.map((d) => d.message)).toEqual(
      expect.arrayContaining([
        expect.stringContaining('workspace.repo'),
        expect.stringContaining('workspace.base'),
        expect.stringContaining('workspace.keepFailedMs'),
        'node "a" reads "nope", which is not a state field',
      ]),
    );
  });
});
