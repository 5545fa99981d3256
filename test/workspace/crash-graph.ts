import { appendFileSync, existsSync } from 'node:fs';
import { z } from 'zod';
import { END, graph, patches, workspacePatch } from '../../src/index.js';

// The graph of the workspace crash test, shared by the child that is killed and the test that
// resumes it. Every body appends `<node> <pid> <what it saw>` to the log before it returns.

export const State = z.object({ code: workspacePatch() });

/**
 * plan -> (fix | tests) -> merge. With HANG_FIX=1 in the environment, fix writes half a change
 * into its working copy and then never returns: the process is killed there.
 */
export function crashGraph(repo: string, log: string) {
  const workspace = { repo, base: 'main', patch: 'code' } as const;
  const note = (line: string) => appendFileSync(log, `${line}\n`);
  return graph('workspace-crash', { state: State })
    .node('plan', () => {})
    .node(
      'fix',
      async (_s, ctx) => {
        const ws = ctx.workspace!;
        note(`fix ${process.pid} ${ws.path} half:${existsSync(ws.resolve('half.txt'))}`);
        if (process.env.HANG_FIX === '1') {
          await ws.write('half.txt', 'an edit the crash interrupts\n');
          note(`fix-hangs ${process.pid}`);
          await new Promise(() => {});
        }
        await ws.write('src/price.js', 'export const price = (n) => Math.round(n * 100);\n');
      },
      { workspace, reads: [], writes: [] },
    )
    .node(
      'tests',
      async (_s, ctx) => {
        await ctx.workspace!.write('test/price.test.js', 'console.log("29");\n');
        note(`tests ${process.pid}`);
      },
      { workspace, reads: [], writes: [] },
    )
    .node('merge', () => {}, { join: patches(), workspace })
    .fanOut('plan', ['fix', 'tests'], 'merge')
    .edge('fix', 'merge')
    .edge('tests', 'merge')
    .edge('merge', END)
    .entry('plan')
    .compile();
}
