// The code examples of README.md, docs/server.md, docs/streaming.md and docs/models.md, found
// by a line of theirs, and how test/package/install.test.ts runs each one against the installed
// package. A block none of these names fails that test: a new example runs, or says why not.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './install.js';

/** The documents whose examples run. */
export const documents = [
  'README.md',
  'docs/server.md',
  'docs/streaming.md',
  'docs/models.md',
] as const;

/** One fenced block of a document. */
export interface Block {
  readonly doc: string;
  readonly lang: string;
  readonly code: string;
}

/** Every fenced block of a document, in order, with its language. */
export function blocksOf(doc: string): Block[] {
  const text = readFileSync(join(repoRoot, doc), 'utf8');
  return [...text.matchAll(/^```([a-z]*)\n([\s\S]*?)^```$/gm)].map((m) => ({
    doc,
    lang: m[1]!,
    code: m[2]!,
  }));
}

/** The code examples of the documents: their `ts` and `js` blocks. */
export function examplesOf(doc: string): Block[] {
  return blocksOf(doc).filter((b) => b.lang === 'ts' || b.lang === 'js');
}

/** The one block of `doc` (of language `lang`) that holds `line`; throws when not exactly one. */
export function block(doc: string, line: string, lang?: string): string {
  const found = blocksOf(doc).filter(
    (b) => b.code.includes(line) && (lang === undefined || b.lang === lang),
  );
  if (found.length !== 1)
    throw new Error(
      `${doc} has ${found.length} blocks with "${line}", not one: the test finds none`,
    );
  return found[0]!.code;
}

/** What a code example is for the test: which block (by a line of it), and how it runs. */
export interface Claim {
  readonly doc: (typeof documents)[number];
  readonly line: string;
  /** A block that is not a program (a signature): why it does not run. */
  readonly sketch?: string;
}

/**
 * Every code example, claimed by a test of install.test.ts (or named a sketch, with why). The
 * test checks that each block of the documents is claimed exactly once.
 */
export const claims: readonly Claim[] = [
  { doc: 'README.md', line: "const research = graph('research'" },
  { doc: 'docs/server.md', line: "export default graph('triage'" },
  { doc: 'docs/server.md', line: "import { WaymarkClient } from 'waymark/client';" },
  { doc: 'docs/server.md', line: "import { serve } from 'waymark/server';" },
  { doc: 'docs/streaming.md', line: "import { run, watch } from 'waymark';" },
  { doc: 'docs/streaming.md', line: "import { history } from 'waymark';" },
  { doc: 'docs/streaming.md', line: "import { patchState } from 'waymark';" },
  { doc: 'docs/streaming.md', line: "pauseBefore: ['send']" },
  { doc: 'docs/models.md', line: "export default graph('summarize'" },
  {
    doc: 'docs/models.md',
    line: "model,            // AI SDK model object or 'provider:model-id'",
    sketch: 'the options of model(), with their types: a signature, not a program',
  },
  {
    doc: 'docs/models.md',
    line: '...modelOptions, // everything model() takes',
    sketch: 'the options agent() adds to those of model(): a signature, not a program',
  },
  { doc: 'docs/models.md', line: 'comment: effectTool({' },
  {
    doc: 'docs/models.md',
    line: 'export function investigator(',
    sketch:
      "run as written by test/model/mcp-docs.test.ts: it needs the bug-triage example's MCP server and a git repository, which an installed project does not have",
  },
];

/** How a child process ended. */
export interface Ended {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The environment a user's shell would give: no test runner's colours or fault switches. */
export function userEnv(extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  const { FORCE_COLOR: _f, WAYMARK_FAULTS: _w, npm_command: _n, ...inherited } = process.env;
  return { ...inherited, NO_COLOR: '1', ...extra };
}

/**
 * Runs a command (no shell) in `cwd` to its end, at most `timeoutMs` (then SIGKILL: an example
 * that hangs fails, it does not hang the suite). Asynchronous, so that a server in the test's
 * own process (a fake model provider) answers it meanwhile.
 */
export function exec(
  command: string,
  args: readonly string[],
  cwd: string,
  env: Readonly<Record<string, string>> = {},
  timeoutMs = 60_000,
): Promise<Ended> {
  return new Promise((resolve) => {
    const child = spawn(command, [...args], { cwd, env: userEnv(env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => {
      stderr += `\n(killed after ${timeoutMs} ms: it did not end)`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * The code of a streaming.md example with what its page says it has around it: the `triage`
 * graph of server.md's session (from `graphs/triage.ts`), a SQLite `store` of its own, an
 * `input` and a `runId`, and with `waiting` a run of that id already waiting for its approval.
 * Only the names the example uses and does not declare are given.
 */
export function withTriage(code: string, name: string, waiting: boolean): string {
  const given: Record<string, string> = {
    triage: 'const triage = docsTriage;',
    store: `const store = new DocsSqliteStore({ path: '.waymark/${name}.db' });`,
    input: "const input = { issue: 'login fails' };",
    runId: `const runId = '${name}';`,
  };
  const declared = (id: string) =>
    new RegExp(`(const|let|function)\\s+${id}\\b|import\\s*\\{[^}]*\\b${id}\\b`).test(code);
  const lines = [
    "import docsTriage from './graphs/triage.ts';",
    "import { SqliteStore as DocsSqliteStore } from 'waymark/sqlite';",
    "import { run as docsRun } from 'waymark';",
  ];
  // The store and the graph are given whenever a run is made first.
  for (const [id, text] of Object.entries(given))
    if (((waiting && id !== 'input') || new RegExp(`\\b${id}\\b`).test(code)) && !declared(id))
      lines.push(text);
  if (waiting) lines.push("await docsRun(docsTriage, { issue: 'login fails' }, { store, runId });");
  return `${lines.join('\n')}\n${code}\nawait store.close();\n`;
}

/**
 * models.md's effect tool (`tools: { comment: effectTool(...) }`) inside the agent it belongs
 * to: a run whose model calls the tool, then fails like a provider, and is retried; the model
 * calls the tool again. It prints what `github.comment` was called with: once.
 */
export function insideAgent(tools: string): string {
  return `import { z } from 'zod';
import { END, graph, run } from 'waymark';
import { agent, effectTool, scriptedModel } from 'waymark/model';

const keys: string[] = [];
const github = {
  comment: async (body: string, { idempotencyKey }: { idempotencyKey: string }) => {
    keys.push(idempotencyKey);
    return { id: keys.length, body };
  },
};
let calls = 0;
const model = scriptedModel(() => {
  calls++;
  if (calls % 2 === 1) return { toolCalls: [{ toolName: 'comment', input: { body: 'Looking into it.' } }] };
  if (calls === 2) return { error: new Error('provider down') };
  return { object: { answer: 'commented' } };
});

const issues = graph('issues', {
  state: z.object({ issue: z.string(), answer: z.string().default('') }),
})
  .node(
    'respond',
    agent({
      model,
      prompt: (s) => s.issue,
      output: z.object({ answer: z.string() }),
      maxTurns: 3,
      ${tools.trim().replace(/\n/g, '\n      ')},
    }),
    { writes: ['answer'], retry: { attempts: 2 } },
  )
  .edge('respond', END)
  .entry('respond')
  .compile();

const result = await run(issues, { issue: 'login fails' }, { runId: 'e1' });
if (result.status !== 'succeeded') throw new Error(\`the run \${result.status}\`);
console.log(\`posted once: \${keys.join(', ')}\`);
`;
}
