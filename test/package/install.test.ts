// The package as a user gets it: `npm pack` of this repository (its prepare script builds
// dist/), installed into fresh projects, where a graph file of the user's own, importing
// waymark, waymark/sqlite and waymark/model, goes through `npx waymark validate`, `run`,
// `answer` and `resume`. Part of `npm test` (the README's test command), so CI runs it.
import { spawn, spawnSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scriptedOpenAI } from '../support/scripted-openai.js';
import {
  block,
  claims,
  documents,
  examplesOf,
  exec,
  insideAgent,
  userEnv,
  withTriage,
} from './docs-examples.js';
import { installInto, npmTimeoutMs, pack, repoRoot } from './install.js';

const work = mkdtempSync(join(tmpdir(), 'waymark-package-'));
// Three projects of node_modules: more than the 10 s a hook gets by default on a busy machine.
afterAll(() => rmSync(work, { recursive: true, force: true }), 120_000);

let tarball = '';
let files: string[] = [];
beforeAll(() => {
  ({ tarball, files } = pack(work));
}, npmTimeoutMs);

/**
 * The `"type": "module"` project, installed once and shared: the trial below, and the docs'
 * examples (install.test.ts's second half), which need the AI SDK (scriptedModel) and its
 * OpenAI-compatible provider (models.md's first example, on a local fake of the API).
 */
let installed: Promise<string> | undefined;
function moduleProject(): Promise<string> {
  installed ??= Promise.resolve().then(() => {
    const dir = join(work, 'module');
    installInto(dir, tarball, {
      type: 'module',
      extra: ['zod@4.6.7', 'ai@6.0.326', '@ai-sdk/openai-compatible@2.0.92'],
    });
    return dir;
  });
  return installed;
}

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
  it('ships dist/ (built by prepare), the bin and the docs, and no tests', () => {
    expect(files).toContain('dist/cli/main.js');
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/index.d.ts');
    expect(files).toContain('bin/waymark.js');
    expect(files).toContain('docs/cli.md');
    // The web page, built by Vite: `waymark ui` serves it offline.
    expect(files).toContain('dist/ui/index.html');
    expect(files.filter((f) => f.startsWith('test/') || f.endsWith('.test.ts'))).toEqual([]);
  });

  it('ships every file a source map names, so a stack trace or "go to definition" opens a file that is there', () => {
    const maps = files.filter((f) => f.endsWith('.map'));
    expect(maps).toContain('dist/index.js.map');
    expect(maps).toContain('dist/index.d.ts.map');
    const named = new Set<string>();
    for (const map of maps) {
      const { sources } = JSON.parse(readFileSync(join(repoRoot, map), 'utf8')) as {
        sources: string[];
      };
      for (const source of sources) named.add(posix.join(posix.dirname(map), source));
    }
    expect(named.size).toBeGreaterThan(100);
    expect([...named].filter((f) => !files.includes(f))).toEqual([]);
    // Only what a map names (and the folders' READMEs, which npm always packs): the web page's
    // sources are bundled without maps.
    const unnamed = files.filter((f) => f.startsWith('src/') && !named.has(f));
    expect(unnamed.filter((f) => !f.endsWith('/README.md'))).toEqual([]);
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

    // A scriptedModel is an AI SDK model object: without \`ai\` its run stops at the model call,
    // coded, with the install line that models.md's "Testing offline" shows where it is used.
    writeFileSync(join(dir, 'scripted.ts'), trialGraph(true));
    const scripted = npx(dir, ['run', 'scripted.ts', '--input', '{"title":"x"}', '--run-id', 's']);
    expect(scripted.code).not.toBe(0);
    expect(`${scripted.stdout}${scripted.stderr}`).toMatch(
      /MODEL_PROVIDER_MISSING[^\n]*npm install ai@6/,
    );
    const offline = readFileSync(join(repoRoot, 'docs/models.md'), 'utf8').split(
      '## Testing offline',
    )[1];
    expect(offline?.split('\n## ')[0]).toContain('npm install ai@6');

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

  it('"type": "module" with ai: a model node on a scripted model runs through the AI SDK', async () => {
    const dir = await moduleProject();
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

// The docs' examples, run as a user runs them: in the installed project above, importing the
// package by its name, through `npx` and `node`. An example that fails, or hangs (each process
// is killed after a minute), fails here, so it cannot land.
describe('the docs, run against the installed package', { timeout: 300_000 }, () => {
  it('every code example of README.md, docs/server.md, docs/streaming.md and docs/models.md is run here, or named a sketch with why', () => {
    const unclaimed: string[] = [];
    for (const doc of documents)
      for (const example of examplesOf(doc)) {
        const by = claims.filter((c) => c.doc === doc && example.code.includes(c.line));
        if (by.length !== 1)
          unclaimed.push(`${doc}: ${by.length} claims for\n${example.code.slice(0, 200)}`);
      }
    expect(unclaimed).toEqual([]);
    for (const c of claims) expect(() => block(c.doc, c.line), c.line).not.toThrow();
  });

  it("README.md's example runs as written and prints the path it promises", async () => {
    const dir = await examplesDir('readme');
    writeFileSync(join(dir, 'example.ts'), block('README.md', "const research = graph('research'"));
    const out = await exec('node', ['--import', 'tsx', 'example.ts'], dir);
    expectCode(out, 0);
    expect(out.stdout).toBe("succeeded [ 'plan', 'search', 'verify', 'publish' ]\n");
  });

  it("server.md's first session, following only the docs: a scriptedModel graph served, its wait answered from waymark/client, the run watched to its end; npx killed, the server goes", async () => {
    const dir = await examplesDir('session');
    const doc = 'docs/server.md';
    // What it says to install is what this project has.
    const install = block(doc, 'npm install waymark', 'sh').match(/npm install ([^\n#]+)/)![1]!;
    const project = await moduleProject();
    for (const spec of install.trim().split(/\s+/)) {
      const [name, major] = spec.split(/(?<=.)@/) as [string, string | undefined];
      const version = JSON.parse(
        readFileSync(join(project, 'node_modules', name, 'package.json'), 'utf8'),
      ).version as string;
      if (major !== undefined) expect(`${name}@${version.split('.')[0]}`).toBe(spec);
    }
    writeSessionGraph(dir);
    writeFileSync(join(dir, 'client.mjs'), block(doc, "from 'waymark/client'", 'js'));
    expectCode(
      await exec('npx', ['--no-install', 'waymark', 'validate', 'graphs/triage.ts'], dir),
      0,
    );

    // `WAYMARK_TOKEN=change-me npx waymark serve --graphs ./graphs --port 8787`, on a free port.
    const command = block(doc, 'npx waymark serve --graphs ./graphs', 'sh').trim();
    const [assignment, npxWord, ...args] = command.split(/\s+/);
    expect(npxWord).toBe('npx');
    const token = assignment!.replace(/^WAYMARK_TOKEN=/, '');
    const port = args.indexOf('--port');
    args[port + 1] = '0';
    let serverPid = 0;
    const server = spawn('npx', ['--no-install', ...args], {
      cwd: dir,
      env: userEnv({ WAYMARK_TOKEN: token }),
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        server.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const m = / at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
          if (m !== null) resolve(m[1]!);
        });
        server.on('exit', (code) => reject(new Error(`serve exited ${code}: ${out}`)));
      });

      // `WAYMARK_TOKEN=change-me node client.mjs`, told where the server is.
      const clientCommand = block(doc, 'node client.mjs', 'sh').trim();
      expect(clientCommand).toBe(`WAYMARK_TOKEN=${token} node client.mjs`);
      const client = await exec('node', ['client.mjs'], dir, {
        WAYMARK_TOKEN: token,
        WAYMARK_URL: url,
      });
      expectCode(client, 0);
      // Exactly the output the page shows.
      expect(client.stdout).toBe(block(doc, 'asks: Send a reply to', 'text'));

      // The run is in the project's database, and `waymark watch` follows it to its end.
      const listed = await exec('npx', ['--no-install', 'waymark', '--json', 'ls'], dir);
      const [run] = (JSON.parse(listed.stdout.split('\n')[0]!) as { runs: ListedRun[] }).runs;
      expect(run).toMatchObject({ graph: 'triage', status: 'succeeded' });
      serverPid = run!.lease!.pid;
      const watch = /`npx waymark watch <run-id>([^`]*)`/.exec(
        readFileSync(join(repoRoot, doc), 'utf8'),
      )!;
      const watched = await exec(
        'npx',
        ['--no-install', 'waymark', 'watch', run!.runId, ...words(watch[1]!)],
        dir,
      );
      expectCode(watched, 0);
      expect(watched.stdout).toMatch(/run\b.*\bsucceeded/);
    } finally {
      // What a user does to a server started with npx: kill npx. npm does not pass the signal
      // on; the server sees that npm is gone, and stops.
      server.kill('SIGTERM');
    }
    expect(serverPid).toBeGreaterThan(1);
    let gone = false;
    for (let i = 0; i < 100 && !gone; i++) {
      gone = !alive(serverPid);
      if (!gone) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(gone).toBe(true);
  });

  it("server.md's serve() program serves the session's graph until SIGTERM", async () => {
    const dir = await examplesDir('session');
    writeSessionGraph(dir);
    const doc = 'docs/server.md';
    writeFileSync(join(dir, 'server.ts'), block(doc, "import { serve } from 'waymark/server';"));
    // As the page says to run it: `node --import tsx server.ts`.
    expect(readFileSync(join(repoRoot, doc), 'utf8')).toContain('`node --import tsx server.ts`');
    const server = spawn('node', ['--import', 'tsx', 'server.ts'], { cwd: dir, env: userEnv() });
    const ended = new Promise<number | null>((resolve) => server.once('close', resolve));
    try {
      const [url, token] = await new Promise<[string, string]>((resolve, reject) => {
        let out = '';
        server.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const m = /serving at (\S+) \(token (\S+)\)/.exec(out);
          if (m !== null) resolve([m[1]!, m[2]!]);
        });
        server.stderr.on('data', (chunk: Buffer) => {
          out += chunk.toString();
        });
        void ended.then((code) => reject(new Error(`server.ts exited ${code}: ${out}`)));
      });
      const graphs = await fetch(`${url}/graphs`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(graphs.status).toBe(200);
      expect(((await graphs.json()) as { graphs: { name: string }[] }).graphs).toMatchObject([
        { name: 'triage' },
      ]);
    } finally {
      server.kill('SIGTERM');
    }
    expect(await ended).toBe(0);
  });

  it("streaming.md's examples run on the session's triage graph, each to its end", async () => {
    const dir = await examplesDir('session');
    writeSessionGraph(dir);
    const doc = 'docs/streaming.md';
    // The run's first commits, told live (`watch` of run()) and then read from the store: the same.
    const toWait =
      '1.0 run\n1.1 activation.scheduled\n2.0 activation.completed\n2.1 wait.opened\n2.2 run\n';
    const cases: [line: string, waiting: boolean, output: string][] = [
      ["import { run, watch } from 'waymark';", false, toWait + toWait],
      ["import { history } from 'waymark';", true, "[ 'created', 'started' ] [ 'completed' ]\n"],
      ["import { patchState } from 'waymark';", true, ''],
      ["pauseBefore: ['send']", false, "waiting\nwaiting [ 'approve' ]\n"],
    ];
    for (const [i, [line, waiting, output]] of cases.entries()) {
      const name = `streaming-${i + 1}`;
      writeFileSync(join(dir, `${name}.ts`), withTriage(block(doc, line), name, waiting));
      const out = await exec('node', ['--import', 'tsx', `${name}.ts`], dir);
      expectCode(out, 0);
      expect(out.stdout, name).toBe(output);
    }
  });

  it("models.md's graph runs through its provider (--model, on a local fake of the OpenAI API), and an effect tool acts once", async () => {
    const dir = await examplesDir('models');
    const doc = 'docs/models.md';
    writeFileSync(join(dir, 'summarize.ts'), block(doc, "export default graph('summarize'"));
    const validated = await exec(
      'npx',
      ['--no-install', 'waymark', 'validate', 'summarize.ts'],
      dir,
    );
    expectCode(validated, 0);
    const fake = await scriptedOpenAI(() => ({ summary: 'Tea came first.' }));
    try {
      const ran = await exec(
        'npx',
        [
          '--no-install',
          'waymark',
          'run',
          'summarize.ts',
          '--model',
          'openai-compatible:tiny',
          '--run-id',
          's1',
          '--input',
          '{"text":"Tea is older than coffee, by a few thousand years."}',
        ],
        dir,
        { WAYMARK_OPENAI_BASE_URL: fake.baseUrl },
      );
      expectCode(ran, 0);
      expect(fake.requests).toHaveLength(1);
    } finally {
      await fake.close();
    }
    const shown = JSON.parse(
      (await exec('npx', ['--no-install', 'waymark', '--json', 'show', 's1'], dir)).stdout,
    ) as { state: { summary: string } };
    expect(shown.state.summary).toBe('Tea came first.');

    // The effect tool, in an agent that calls it, then is resumed: the comment is posted once.
    writeFileSync(join(dir, 'effect-tool.ts'), insideAgent(block(doc, 'comment: effectTool({')));
    const tool = await exec('node', ['--import', 'tsx', 'effect-tool.ts'], dir);
    expectCode(tool, 0);
    expect(tool.stdout).toBe('posted once: e1/respond:1/comment#1\n');
  });
});

interface ListedRun {
  readonly runId: string;
  readonly graph: string;
  readonly status: string;
  readonly lease: { readonly pid: number } | null;
}

/** Whether a process of this pid is there. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A folder of its own in the installed project, for one example. */
async function examplesDir(name: string): Promise<string> {
  const dir = join(await moduleProject(), 'docs-examples', name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** The words of a command line of the docs (they quote nothing). */
const words = (line: string): string[] => line.split(/\s+/).filter((w) => w !== '');

/** server.md's session graph, as `graphs/triage.ts` in `dir` (the other examples use it too). */
function writeSessionGraph(dir: string): void {
  mkdirSync(join(dir, 'graphs'), { recursive: true });
  writeFileSync(
    join(dir, 'graphs/triage.ts'),
    block('docs/server.md', "export default graph('triage'"),
  );
}
