import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { all, append, type ExecResult, graph, permanentError, person } from '../../src/index.js';
import { type ModelCall, type ModelRef, model, type PriceTable } from '../../src/model/index.js';
import { type BugId, bugIds, bugs } from './bugs.js';
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
import { scripted } from './scripted.js';

/**
 * Bug triage with real processes: triage a report, run its repro script as a child process,
 * and go where the failure points: a network failure is reproduced again (at most 3 runs), bad
 * data gets a backfill job, a logic bug gets a code fix and a regression test side by side,
 * verified by running both; a change to billing code waits for a person's approval. Triage,
 * the fix and the tests are model nodes; they call a scripted model unless the run names one
 * (`waymark run ... --model openai:gpt-4o-mini`).
 */

/** Where the repro scripts and the modules they exercise live; resolved from this file. */
export const fixturesDir = fileURLToPath(new URL('./fixtures/', import.meta.url));

/** How a repro run failed, read from the process's own output. `none`: it did not fail. */
export const FailureKind = z.enum(['network', 'data', 'logic', 'none']);
export type FailureKind = z.infer<typeof FailureKind>;

const Run = z.object({
  argv: z.array(z.string()),
  exitCode: z.number().nullable(),
  stdout: z.string(),
  stderr: z.string(),
});
const File = z.object({ path: z.string(), content: z.string() });

export const State = z.object({
  /** Which bundled report to work on. */
  bug: z.enum(bugIds),
  component: z.string().default(''),
  suspects: z.array(z.string()).default([]),
  /** Repro runs so far; the script reads it as REPRO_ROUND. */
  round: z.number().int().default(0),
  repro: Run.extend({ kind: FailureKind }).nullable().default(null),
  backfill: z
    .object({ job: z.string(), table: z.string(), field: z.string(), ids: z.array(z.number()) })
    .nullable()
    .default(null),
  fix: z.array(File).default([]),
  tests: z.array(File).default([]),
  verification: z
    .object({ passed: z.boolean(), runs: z.array(Run) })
    .nullable()
    .default(null),
  approved: z.boolean().nullable().default(null),
  note: z.string().default(''),
  outcome: z.string().default(''),
  log: z.array(z.string()).default([]),
});
export type State = z.infer<typeof State>;

/**
 * The failure kind a repro's output reveals: connection errors are `network`, a `DataError` or
 * unparsable input is `data`, anything else that fails (an assertion, a crash) is `logic`.
 *
 * @example
 * classify({ exitCode: 1, stderr: 'Error: connect ECONNRESET 203.0.113.7:443' }) // 'network'
 */
export function classify(run: Pick<ExecResult, 'exitCode' | 'stderr'>): FailureKind {
  if (run.exitCode === 0) return 'none';
  if (/\b(ECONNRESET|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN)\b|socket hang up/.test(run.stderr))
    return 'network';
  if (/\bDataError\b|is not valid JSON/.test(run.stderr)) return 'data';
  return 'logic';
}

/** Whether a change touches billing code: then a person approves it before it ships. */
export const touchesBilling = (s: Pick<State, 'fix'>) =>
  s.fix.some((f) => f.path.startsWith('billing/'));

// Enough of a repro's output to read the failure; the state is no place for megabytes of logs.
const execLimits = { timeoutMs: 30_000, maxOutputBytes: 64 * 1024 };

/** The fixtures' files by path, repro scripts included: what triage may name as suspects. */
export const fixtureFiles: readonly string[] = readdirSync(fixturesDir, {
  recursive: true,
  encoding: 'utf8',
})
  .map((entry) => entry.split(sep).join('/'))
  .filter((entry) => entry.includes('.'))
  .sort();

const reportOf = (bug: BugId) => {
  const { id, title, text } = bugs[bug];
  return { id, title, text };
};

const fixInput = (s: Readonly<State>): FixInput => ({
  report: reportOf(s.bug),
  component: s.component,
  failure: failureOf(s.repro?.stderr ?? '', fixturesDir),
  sources: Object.fromEntries(
    s.suspects.map((path) => [path, readFileSync(join(fixturesDir, path), 'utf8')]),
  ),
});

/**
 * The models of the graph's model nodes: `model` for all three, or one per node. Each is an AI
 * SDK model object or `provider:model-id`; unset, the scripted model. A run started with a model
 * (`--model`) overrides them all.
 */
export interface Models {
  readonly model?: ModelRef;
  readonly triage?: ModelRef;
  readonly fixCode?: ModelRef;
  readonly updateTests?: ModelRef;
}

/**
 * Prices (US dollars per million tokens) of the models this example is run with, so a run
 * budget in dollars (`--max-cost`) can be counted: the scripted model costs nothing. A model
 * missing here runs, but a cost budget with it fails with `MODEL_PRICE_MISSING` before any call.
 */
export const prices: PriceTable = {
  'scripted:bug-triage': { inputPerMillion: 0, outputPerMillion: 0 },
  'openai:gpt-4o-mini': { inputPerMillion: 0.15, outputPerMillion: 0.6 },
  'openai:gpt-4o': { inputPerMillion: 2.5, outputPerMillion: 10 },
};

/**
 * A model node's log line, ending with the model that answered: the run's (`--model`), or the
 * node's own, so a scripted answer is never taken for a model's.
 */
const signed = (line: string, call: ModelCall) => `${line} [model ${call.model}]`;

/** A model may name any path; a change is written only inside the scratch workspace. */
function inside(workspace: string, path: string): string {
  const target = resolve(workspace, path);
  if (!target.startsWith(workspace + sep))
    throw permanentError(`the change names ${JSON.stringify(path)}, outside the workspace`);
  return target;
}

/**
 * The bug-triage graph over the given models (a new scripted one by default). The graph is the
 * same whatever answers.
 *
 * @example
 * const g = bugTriage({ model: recordModel('openai:gpt-4o-mini', 'cassettes/triage.json') });
 */
export function bugTriage(models: Models = {}) {
  const own = models.model ?? scripted();
  const triageModel = models.triage ?? own;
  const fixModel = models.fixCode ?? own;
  const testsModel = models.updateTests ?? own;

  const triage = model<State, Triage>({
    model: triageModel,
    system: triageSystem,
    prompt: (s) =>
      prompt('Triage this bug report.', { report: reportOf(s.bug), files: fixtureFiles }),
    output: Triage,
    // A suspect that is not a file of the project is set aside in the run's quarantine.
    checkItems: { suspects: (path) => (fixtureFiles.includes(path) ? [] : ['file-not-found']) },
    update: (t, s, call) => ({
      component: t.component,
      suspects: [...t.suspects],
      log: [signed(`triage: "${bugs[s.bug].title}" is in ${t.component}: ${t.summary}`, call)],
    }),
    temperature: 0,
    prices,
  });
  const fixCode = model<State, Changes>({
    model: fixModel,
    system: fixSystem,
    prompt: (s) => prompt('Fix this bug.', fixInput(s)),
    output: Changes,
    update: ({ files }, _s, call) => ({
      fix: [...files],
      log: [signed(`fix-code: changed ${files.map((f) => f.path).join(', ')}`, call)],
    }),
    temperature: 0,
    prices,
  });
  const updateTests = model<State, Changes>({
    model: testsModel,
    system: testsSystem,
    prompt: (s) => prompt('Write a regression test for this bug.', fixInput(s)),
    output: Changes,
    update: ({ files }, _s, call) => ({
      tests: [...files],
      log: [signed(`update-tests: added ${files.map((f) => f.path).join(', ')}`, call)],
    }),
    temperature: 0,
    prices,
  });

  return graph('bug-triage', { state: State, version: 1, reducers: { log: append } })
    .node('triage', triage, {
      reads: ['bug'],
      writes: ['component', 'suspects', 'log'],
      retry: { attempts: 3, backoffMs: 1000 },
    })
    .node(
      'reproduce',
      async (s, ctx) => {
        const { script, args } = bugs[s.bug].repro;
        const round = s.round + 1;
        const argv = ['node', join(fixturesDir, script), ...args];
        const run = await ctx.exec(argv, {
          cwd: fixturesDir,
          env: { REPRO_ROUND: String(round) },
          ...execLimits,
        });
        const kind = classify(run);
        const { exitCode, stdout, stderr } = run;
        return {
          round,
          repro: { argv, exitCode, stdout, stderr, kind },
          log: [`reproduce: round ${round} exited ${exitCode}: ${kind}`],
        };
      },
      {
        exec: ['node'],
        visits: 3,
        onError: 'escalate',
        // `repro` is read by the router, which routes on the failure kind this node found.
        reads: ['bug', 'round', 'repro'],
        writes: ['round', 'repro', 'log'],
      },
    )
    .node(
      'retry',
      async (s, ctx) => {
        // A short backoff before the next run; a cancel ends it at once.
        await sleep(20 * 2 ** (s.round - 1), undefined, { signal: ctx.signal });
        return { log: [`retry: network failure in round ${s.round}, reproducing again`] };
      },
      { reads: ['round'], writes: ['log'] },
    )
    .node(
      'backfill',
      async (s, ctx) => {
        const ids = [...(s.repro?.stderr.match(/ids ([\d, ]+)/)?.[1]?.matchAll(/\d+/g) ?? [])].map(
          (m) => Number(m[0]),
        );
        // Queuing the job acts on the outside world: once per key, also across retries and resumes.
        const backfill = await ctx.effect('backfill-job', (key) => ({
          job: key,
          table: 'users',
          field: 'email',
          ids,
        }));
        return { backfill, log: [`backfill: queued ${backfill.job} for ids ${ids.join(', ')}`] };
      },
      { kind: 'effect', reads: ['repro'], writes: ['backfill', 'log'] },
    )
    .node('plan-fix', (s) => ({ log: [`plan: fix ${s.suspects.join(', ')} and add a test`] }), {
      reads: ['suspects'],
      writes: ['log'],
    })
    .node('fix-code', fixCode, {
      reads: ['bug', 'component', 'suspects', 'repro'],
      writes: ['fix', 'log'],
      retry: { attempts: 3, backoffMs: 1000 },
    })
    .node('update-tests', updateTests, {
      reads: ['bug', 'component', 'suspects', 'repro'],
      writes: ['tests', 'log'],
      retry: { attempts: 3, backoffMs: 1000 },
    })
    .node('merge', (s) => ({ log: [`merge: ${s.fix.length + s.tests.length} file(s) changed`] }), {
      join: all(),
      writes: ['log'],
    })
    .node(
      'verify',
      async (s, ctx) => {
        // A scratch copy of the fixtures with the change applied: the bundled files stay as
        // they are, so every run (and every test) starts from the same bug.
        const workspace = mkdtempSync(join(tmpdir(), 'bug-triage-'));
        try {
          cpSync(fixturesDir, workspace, { recursive: true });
          for (const file of [...s.fix, ...s.tests])
            writeFileSync(inside(workspace, file.path), file.content);
          const argvs = [
            ['node', bugs[s.bug].repro.script, ...bugs[s.bug].repro.args],
            ...s.tests.map((t) => ['node', t.path]),
          ];
          const runs = [];
          for (const argv of argvs) {
            const { exitCode, stdout, stderr } = await ctx.exec(argv, {
              cwd: workspace,
              ...execLimits,
            });
            runs.push({ argv, exitCode, stdout, stderr });
          }
          const passed = runs.every((r) => r.exitCode === 0);
          return {
            verification: { passed, runs },
            log: [`verify: ${runs.length} run(s), ${passed ? 'all pass' : 'some fail'}`],
          };
        } finally {
          rmSync(workspace, { recursive: true, force: true });
        }
      },
      {
        exec: ['node'],
        onError: 'escalate',
        // `verification` is read by the router, which routes on what this node found.
        reads: ['bug', 'fix', 'tests', 'verification'],
        writes: ['verification', 'log'],
      },
    )
    .node(
      'approve',
      person({
        prompt: (s) =>
          `The fix for "${bugs[s.bug].title}" changes billing code (${s.fix.map((f) => f.path).join(', ')}) and passes its repro and tests. Ship it?`,
        answer: z.object({ approved: z.boolean(), note: z.string().default('') }),
      }),
    )
    .node(
      'done',
      (s) => {
        const outcome =
          s.repro?.kind === 'none'
            ? `not reproducible after ${s.round} run(s): closed as flaky`
            : s.backfill !== null
              ? `data bug: backfill ${s.backfill.job} queued`
              : s.approved === false
                ? `fix rejected at approval: ${s.note}`
                : `fixed${s.approved ? ' and approved' : ''}: ${s.fix.map((f) => f.path).join(', ')}`;
        return { outcome, log: [`done: ${outcome}`] };
      },
      { terminal: true, writes: ['outcome', 'log'] },
    )
    .node(
      'escalate',
      (_s, ctx) => {
        const why =
          ctx.error !== undefined
            ? `${ctx.error.code}: ${ctx.error.message}`
            : 'the fix did not pass its repro and tests';
        return { outcome: `escalated to a person: ${why}`, log: [`escalate: ${why}`] };
      },
      { terminal: true, writes: ['outcome', 'log'] },
    )
    .edge('triage', 'reproduce')
    .route(
      'reproduce',
      (s) => {
        const kind: FailureKind = s.repro?.kind ?? 'logic';
        return ({ network: 'retry', data: 'backfill', logic: 'plan-fix', none: 'done' } as const)[
          kind
        ];
      },
      ['retry', 'backfill', 'plan-fix', 'done'],
    )
    .edge('retry', 'reproduce')
    .edge('backfill', 'done')
    .fanOut('plan-fix', ['fix-code', 'update-tests'], 'merge')
    .edge('fix-code', 'merge')
    .edge('update-tests', 'merge')
    .edge('merge', 'verify')
    .route(
      'verify',
      (s) => (!s.verification?.passed ? 'escalate' : touchesBilling(s) ? 'approve' : 'done'),
      ['escalate', 'approve', 'done'],
    )
    .edge('approve', 'done')
    .entry('triage')
    .compile();
}

export default bugTriage();
