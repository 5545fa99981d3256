// The package as a user gets it: `npm pack` of this repository (its prepare script builds
// dist/), installed into fresh projects, where a graph file of the user's own, importing
// waymark, waymark/sqlite and waymark/model, goes through `npx waymark validate`, `run`,
// `answer` and `resume`. Part of `npm test` (the README's test command), so CI runs it.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installInto, npmTimeoutMs, pack, repoRoot } from './install.js';

const work = mkdtempSync(join(tmpdir(), 'waymark-package-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

let tarball = '';
let files: string[] = [];
beforeAll(() => {
  ({ tarball, files } = pack(work));
}, npmTimeoutMs);

/** The graph file a user writes: it imports every entry a user would. */
function trialGraph(withModel: boolean): string {
  return `import { z } from 'zod';
import { graph, permanentError, person } from 'waymark';
import { defaultSqlitePath } from 'waymark/sqlite';
import { model, parseModelName, scriptedModel } from 'waymark/model';

const State = z.object({
  title: z.string().min(1),
  summary: z.string().default(''),
  approved: z.boolean().default(false),
  published: z.string().default(''),
});

const summarize = ${
    withModel
      ? `model({
  model: scriptedModel([{ object: { summary: 'a short summary' } }]),
  prompt: (s: { title: string }) => \`Summarize \${s.title}\`,
  output: z.object({ summary: z.string() }),
})`
      : `(s: { title: string }) => ({
  summary: \`\${s.title} for \${parseModelName('openai:gpt-4o-mini').provider}\`,
})`
  };

export default graph('trial', { state: State })
  .node('summarize', summarize, { writes: ['summary'] })
  .node(
    'review',
    person({
      prompt: (s) => \`Publish "\${s.summary}"?\`,
      answer: z.object({ approved: z.boolean() }),
      update: (a) => ({ approved: a.approved }),
    }),
  )
  .node(
    'publish',
    (s) => {
      if (process.env.TRIAL_FAIL === '1') throw permanentError('the CMS is down');
      return { published: \`\${s.summary} (runs in \${defaultSqlitePath})\` };
    },
    { terminal: true },
  )
  .edge('summarize', 'review')
  .edge('review', 'publish')
  .entry('summarize');
`;
}

interface Outcome {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `npx waymark ...args` in the project, as a user types it (no shell). */
function npx(dir: string, args: readonly string[], env: Record<string, string> = {}): Outcome {
  return run('npx', ['--no-install', 'waymark', ...args], dir, env);
}

function run(
  command: string,
  args: readonly string[],
  cwd: string,
  env: Record<string, string> = {},
): Outcome {
  const { FORCE_COLOR: _f, WAYMARK_FAULTS: _w, ...inherited } = process.env;
  const result = spawnSync(command, [...args], {
    cwd,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...inherited, NO_COLOR: '1', ...env },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function expectCode(out: Outcome, code: number): void {
  expect(out.code, `stdout:\n${out.stdout}\nstderr:\n${out.stderr}`).toBe(code);
}

/** validate, run (it waits), answer (publish fails), resume (it succeeds), then show. */
function trial(dir: string): void {
  const validated = npx(dir, ['validate', 'graph.ts']);
  expectCode(validated, 0);
  expect(validated.stdout).toContain('graph "trial" v1 is valid');

  const started = npx(dir, ['run', 'graph.ts', '--input', '{"title":"Notes"}', '--run-id', 't']);
  expectCode(started, 3);
  expect(started.stdout).toMatch(
    /^run t of graph "trial", checkpoints in .*\.waymark\/waymark\.db$/m,
  );
  expect(started.stdout).toContain('next:        waymark approve t');

  const answered = npx(dir, ['answer', 't', '--value', '{"approved":true}'], { TRIAL_FAIL: '1' });
  expectCode(answered, 1);
  expect(answered.stdout).toContain('NODE_FAILED: the CMS is down');
  expect(answered.stdout).toContain('next:        waymark resume t');

  const resumed = npx(dir, ['resume', 't']);
  expectCode(resumed, 0);
  expect(resumed.stdout).toContain('run t succeeded');

  const shown = JSON.parse(npx(dir, ['--json', 'show', 't']).stdout) as {
    state: { published: string };
  };
  expect(shown.state.published).toMatch(/ \(runs in \.waymark\/waymark\.db\)$/);
}

describe('npm pack', () => {
  it('ships dist/ (built by prepare), the bin and the docs, and no sources or tests', () => {
    expect(files).toContain('dist/cli/main.js');
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/index.d.ts');
    expect(files).toContain('bin/waymark.js');
    expect(files).toContain('docs/cli.md');
    // The web page, built by Vite: `waymark ui` serves it offline.
    expect(files).toContain('dist/ui/index.html');
    expect(files.filter((f) => f.startsWith('src/') || f.startsWith('test/'))).toEqual([]);
  });
});

describe.concurrent('the package installed into an empty project', { timeout: 300_000 }, () => {
  it('npm init -y (CommonJS, no ai): a .ts graph validates, runs, takes its answer and resumes; waymark/model imports; a missing or unbuilt better-sqlite3 is named', () => {
    const dir = join(work, 'commonjs');
    installInto(dir, tarball, { extra: ['zod@4.6.7'] });
    writeFileSync(join(dir, 'graph.ts'), trialGraph(false));
    trial(dir);

    // waymark/model imports where `ai` is not installed, until a model is called.
    const model = run(
      'node',
      ['-e', "import('waymark/model').then((m) => console.log(typeof m.model))"],
      dir,
    );
    expectCode(model, 0);
    expect(model.stdout.trim()).toBe('function');

    // The native module missing (installed with --ignore-scripts, a failed build).
    const binary = join(dir, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node');
    renameSync(binary, `${binary}.away`);
    const unbuilt = npx(dir, ['ls']);
    renameSync(`${binary}.away`, binary);
    expectCode(unbuilt, 1);
    expect(unbuilt.stderr).toMatch(
      /^error STORE_UNAVAILABLE: better-sqlite3 is installed, but its native module cannot be loaded: /m,
    );
    expect(unbuilt.stderr).toContain(
      'hint: its native module is missing or was built for another Node.js: npm rebuild better-sqlite3',
    );

    // The package missing altogether.
    const driver = join(dir, 'node_modules/better-sqlite3');
    renameSync(driver, `${driver}.away`);
    const missing = npx(dir, ['ls']);
    renameSync(`${driver}.away`, driver);
    expectCode(missing, 1);
    expect(missing.stderr.split('\n')).toEqual([
      'error STORE_UNAVAILABLE: better-sqlite3 is not installed: the waymark command keeps its runs in SQLite through it',
      'hint: add it to the project: npm install better-sqlite3@12',
      '',
    ]);
  });

  it('"type": "module" with ai: a model node on a scripted model runs through the AI SDK', () => {
    const dir = join(work, 'module');
    installInto(dir, tarball, { type: 'module', extra: ['zod@4.6.7', 'ai@6.0.326'] });
    writeFileSync(join(dir, 'graph.ts'), trialGraph(true));
    trial(dir);
    const trace = JSON.parse(npx(dir, ['--json', 'trace', 't']).stdout) as {
      path: string[];
    };
    expect(trace.path).toEqual(['summarize', 'review', 'publish']);
  });

  it('installed from a path (a symlink to the clone): the user script imports waymark, and a graph file gets every public entry', () => {
    const dir = join(work, 'linked');
    mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
    writeFileSync(join(dir, 'package.json'), '{ "name": "linked", "type": "module" }\n');
    // What `npm install ../waymark` makes, without letting npm touch the clone's node_modules.
    symlinkSync(repoRoot, join(dir, 'node_modules', 'waymark'));
    symlinkSync(join(repoRoot, 'node_modules', 'zod'), join(dir, 'node_modules', 'zod'));
    symlinkSync('../waymark/bin/waymark.js', join(dir, 'node_modules', '.bin', 'waymark'));
    writeFileSync(join(dir, 'graph.ts'), trialGraph(false));
    const validated = npx(dir, ['validate', 'graph.ts']);
    expectCode(validated, 0);
    expect(validated.stdout).toContain('graph "trial" v1 is valid');

    writeFileSync(
      join(dir, 'script.js'),
      `import { END, run } from 'waymark';
import { SqliteStore } from 'waymark/sqlite';
import { scriptedModel } from 'waymark/model';
console.log(typeof run, typeof SqliteStore, typeof scriptedModel, String(END).length > 0);
`,
    );
    const script = run('node', ['script.js'], dir);
    expectCode(script, 0);
    expect(script.stdout.trim()).toBe('function function function true');
  });
});
