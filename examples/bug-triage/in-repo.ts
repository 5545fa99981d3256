import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import {
  append,
  type ErrorValue,
  graph,
  type MergeConflict,
  type NodeContext,
  patches,
  person,
  workspacePatch,
} from '../../src/index.js';
import { agent, type ModelRef, model } from '../../src/model/index.js';
import { bugIds, bugs } from './bugs.js';
import { classify, FailureKind, fixtureFiles, prices } from './graph.js';
import { type InvestigateInput, investigateSystem, scriptedInRepo } from './in-repo-scripted.js';
import {
  Changes,
  type FixInput,
  failureOf,
  fixSystem,
  prompt,
  Triage,
  testsSystem,
  triageSystem,
} from './prompts.js';

/**
 * Bug triage over a real repository: the repro runs in a working copy of it, an agent reads the
 * suspects and comments on the report through a local MCP server's tools, then fix-code and
 * update-tests work side by side, each in its own working copy at the recorded base, and their
 * patches are merged three-way at the join. Patches that change the same lines are a
 * `MERGE_CONFLICT`, which goes to a person; a clean merge is verified by running the repro and
 * the new tests on the merged tree. The repository itself is never written to.
 */

const toolsServer = fileURLToPath(new URL('./repo-tools.mjs', import.meta.url));

const Run = z.object({
  argv: z.array(z.string()),
  exitCode: z.number().nullable(),
  stdout: z.string(),
  stderr: z.string(),
});

export const InRepoState = z.object({
  bug: z.enum(bugIds),
  component: z.string().default(''),
  suspects: z.array(z.string()).default([]),
  /** The run's change to the repository: a patch record, never the files. */
  code: workspacePatch(),
  repro: Run.extend({ kind: FailureKind, failure: z.string() }).nullable().default(null),
  investigation: z.string().default(''),
  fix: z.array(z.string()).default([]),
  tests: z.array(z.string()).default([]),
  verification: z
    .object({ passed: z.boolean(), runs: z.array(Run) })
    .nullable()
    .default(null),
  conflict: z
    .object({ files: z.array(z.string()), summary: z.string() })
    .nullable()
    .default(null),
  note: z.string().default(''),
  outcome: z.string().default(''),
  log: z.array(z.string()).default([]),
});
export type InRepoState = z.infer<typeof InRepoState>;

/** Options of {@link bugTriageInRepo}. */
export interface InRepoOptions {
  /** The repository to work on: a git checkout of the project (see `makeBugRepo`). */
  readonly repo: string;
  /** Where the MCP server posts comments (JSON lines), our stand-in for the bug tracker. */
  readonly comments: string;
  /** The model of every model node; default the scripted one. */
  readonly model?: ModelRef;
  /** The revision the run starts from; default `main`. */
  readonly base?: string;
}

const execLimits = { timeoutMs: 30_000, maxOutputBytes: 64 * 1024 };

const reportOf = (s: Pick<InRepoState, 'bug'>) => {
  const { id, title, text } = bugs[s.bug];
  return { id, title, text };
};

// What the fixers see: the suspects as their working copy has them, not as a bundled file.
const fixInput = (s: Readonly<InRepoState>, ctx: NodeContext): FixInput => ({
  report: reportOf(s),
  component: s.component,
  failure: s.repro?.failure ?? '',
  sources: Object.fromEntries(
    s.suspects.map((path) => [path, readFileSync(ctx.workspace!.resolve(path), 'utf8')]),
  ),
});

// A model's whole-file changes, written into the node's working copy (and nowhere else).
function writeChanges(ctx: NodeContext, files: Changes['files']): string[] {
  for (const file of files) {
    const target = ctx.workspace!.resolve(file.path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, file.content);
  }
  return files.map((f) => f.path);
}

/**
 * The workspace variant of the bug-triage graph, over `repo`.
 *
 * @example
 * const g = bugTriageInRepo({ repo: makeBugRepo(), comments: '/tmp/comments.jsonl' });
 * const result = await run(g, { bug: 'search-pagination' });
 */
export function bugTriageInRepo(options: InRepoOptions) {
  const m = options.model ?? scriptedInRepo();
  const workspace = { repo: options.repo, base: options.base ?? 'main', patch: 'code' } as const;
  const repoTools = {
    transport: {
      type: 'stdio' as const,
      command: process.execPath,
      args: [toolsServer, options.repo, options.comments],
    },
    // list_files and delete_file are the server's too: not this node's.
    allow: ['read_file', 'post_comment'],
    effects: ['post_comment'],
  };

  const triage = model<InRepoState, Triage>({
    model: m,
    system: triageSystem,
    prompt: (s) => prompt('Triage this bug report.', { report: reportOf(s), files: fixtureFiles }),
    output: Triage,
    update: (t) => ({
      component: t.component,
      suspects: [...t.suspects],
      log: [`triage: ${t.summary}`],
    }),
    temperature: 0,
    prices,
  });
  const investigate = agent<InRepoState, { note: string }>({
    model: m,
    system: investigateSystem,
    prompt: (s) => {
      const input: InvestigateInput = {
        report: reportOf(s),
        suspects: s.suspects,
        failure: s.repro?.failure ?? '',
      };
      return prompt('Investigate this bug.', input as unknown as FixInput);
    },
    output: z.object({ note: z.string() }),
    mcp: { repo: repoTools },
    maxTurns: 4,
    maxToolCalls: 4,
    update: ({ note }) => ({ investigation: note, log: [`investigate: ${note}`] }),
    prices,
  });
  const changes = (instruction: string, system: string, field: 'fix' | 'tests') =>
    model<InRepoState, Changes>({
      model: m,
      system,
      prompt: (s, ctx) => prompt(instruction, fixInput(s, ctx)),
      output: Changes,
      update: ({ files }, _s, call) => {
        const written = writeChanges(call.ctx, files);
        return {
          [field]: written,
          log: [`${field === 'fix' ? 'fix-code' : 'update-tests'}: ${written.join(', ')}`],
        };
      },
      temperature: 0,
      prices,
    });

  return graph('bug-triage-in-repo', {
    state: InRepoState,
    version: 1,
    reducers: { log: append },
  })
    .node('triage', triage, { reads: ['bug'], writes: ['component', 'suspects', 'log'] })
    .node(
      'reproduce',
      async (s, ctx) => {
        const { script, args } = bugs[s.bug].repro;
        const argv = ['node', script, ...args];
        const run = await ctx.exec(argv, execLimits);
        const failure = failureOf(run.stderr, `${ctx.workspace!.path}/`);
        const { exitCode, stdout, stderr } = run;
        return {
          repro: { argv, exitCode, stdout, stderr, kind: classify(run), failure },
          log: [`reproduce: exited ${exitCode}`],
        };
      },
      { workspace, exec: ['node'], reads: ['bug', 'repro'], writes: ['repro', 'log'] },
    )
    .node('investigate', investigate, {
      reads: ['bug', 'suspects', 'repro'],
      writes: ['investigation', 'log'],
    })
    .node('plan-fix', (s) => ({ log: [`plan: fix ${s.suspects.join(', ')} and add a test`] }), {
      reads: ['suspects'],
      writes: ['log'],
    })
    .node('fix-code', changes('Fix this bug.', fixSystem, 'fix'), {
      workspace,
      reads: ['bug', 'component', 'suspects', 'repro'],
      writes: ['fix', 'log'],
    })
    .node('update-tests', changes('Write a regression test for this bug.', testsSystem, 'tests'), {
      workspace,
      reads: ['bug', 'component', 'suspects', 'repro'],
      writes: ['tests', 'log'],
    })
    .node(
      'merge',
      (_s, ctx) => ({ log: [`merge: ${ctx.join?.patches?.length ?? 0} patches merged`] }),
      { join: patches(), workspace, onError: 'conflict', writes: ['log'] },
    )
    .node(
      'verify',
      async (s, ctx) => {
        const argvs = [
          ['node', bugs[s.bug].repro.script, ...bugs[s.bug].repro.args],
          ...s.tests.map((t) => ['node', t]),
        ];
        const runs = [];
        for (const argv of argvs) {
          const { exitCode, stdout, stderr } = await ctx.exec(argv, execLimits);
          runs.push({ argv, exitCode, stdout, stderr });
        }
        const passed = runs.every((r) => r.exitCode === 0);
        return {
          verification: { passed, runs },
          log: [
            `verify: ${runs.length} run(s) on the merged tree, ${passed ? 'all pass' : 'some fail'}`,
          ],
        };
      },
      {
        workspace,
        exec: ['node'],
        reads: ['bug', 'tests', 'verification'],
        writes: ['verification', 'log'],
      },
    )
    .node(
      'conflict',
      (_s, ctx) => {
        const conflicts =
          (ctx.error?.details as { conflicts?: MergeConflict[] } | undefined)?.conflicts ?? [];
        return {
          conflict: conflictOf(ctx.error, conflicts),
          log: [`conflict: ${conflicts.map((c) => c.path).join(', ')}`],
        };
      },
      { writes: ['conflict', 'log'] },
    )
    .node(
      'resolve',
      person({
        prompt: (s) =>
          `The fix and the regression test for "${bugs[s.bug].title}" both changed ${s.conflict?.files.join(', ')}: ${s.conflict?.summary}. What should happen?`,
        answer: z.object({ note: z.string() }),
      }),
    )
    .node(
      'done',
      (s) => {
        const outcome = `fixed on ${s.code?.commit.slice(0, 12)}: ${s.code?.files.map((f) => f.path).join(', ')}`;
        return { outcome, log: [`done: ${outcome}`] };
      },
      { terminal: true, writes: ['outcome', 'log'] },
    )
    .node(
      'escalate',
      (s) => {
        const why = s.conflict
          ? `the branches conflict in ${s.conflict.files.join(', ')}; the reviewer says: ${s.note}`
          : s.repro?.kind !== 'logic'
            ? `not a logic bug (${s.repro?.kind})`
            : 'the merged change did not pass its repro and tests';
        return { outcome: `escalated: ${why}`, log: [`escalate: ${why}`] };
      },
      { terminal: true, writes: ['outcome', 'log'] },
    )
    .edge('triage', 'reproduce')
    .route('reproduce', (s) => (s.repro?.kind === 'logic' ? 'investigate' : 'escalate'), [
      'investigate',
      'escalate',
    ])
    .edge('investigate', 'plan-fix')
    .fanOut('plan-fix', ['fix-code', 'update-tests'], 'merge')
    .edge('fix-code', 'merge')
    .edge('update-tests', 'merge')
    .edge('merge', 'verify')
    .route('verify', (s) => (s.verification?.passed ? 'done' : 'escalate'), ['done', 'escalate'])
    .edge('conflict', 'resolve')
    .edge('resolve', 'escalate')
    .entry('triage')
    .compile();
}

function conflictOf(error: ErrorValue | undefined, conflicts: readonly MergeConflict[]) {
  const files = [...new Set(conflicts.map((c) => c.path))];
  const hunks = conflicts.reduce((n, c) => n + c.hunks.length, 0);
  return { files, summary: `${hunks} conflicting hunk(s) (${error?.code ?? 'MERGE_CONFLICT'})` };
}
