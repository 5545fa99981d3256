// Hints never name a command that will refuse. For every refusal code the command can print,
// a real situation makes it print that refusal; every command its hint names (in backticks) is
// then run as printed, against the same database, after doing what the hint's words say (fix
// the file, name the moved one), and must not be refused at all. The `next:` lines after a
// run stops are walked the same way. docs/errors.md says which codes the command can print:
// each one is walked here, or listed with the reason it cannot be made to happen in a test.
import { spawn } from 'node:child_process';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import {
  bin,
  call,
  fixture,
  node,
  type Outcome,
  root,
  type Sandbox,
  sandbox,
  testTimeoutMs,
  tsxLoader,
} from './support.js';

/** A refusal, made to happen; then what the user does before typing the hinted command. */
interface Refusal {
  readonly code: string;
  readonly situation: string;
  /** Makes the refusal happen in `box` and returns that call. */
  readonly make: (box: Sandbox) => Promise<Outcome>;
  /** What the hint's words ask before its command (fix the file, ...). */
  readonly fix?: (box: Sandbox) => void;
  /** Values for the hint's placeholders (`<graph-file>`, ...). */
  readonly fill?: (box: Sandbox) => Readonly<Record<string, string>>;
  /** The hint says what to change and names no command. */
  readonly noCommand?: true;
}

/** A fixture copied into the sandbox as a user's file: it imports `waymark`, not src/. */
function userGraph(box: Sandbox, name: string, edit: (text: string) => string = (t) => t): string {
  const zod = pathToFileURL(join(root, 'node_modules', 'zod', 'index.js')).href;
  const text = readFileSync(fixture(name), 'utf8')
    .replaceAll('../../../src/index.js', 'waymark')
    .replaceAll("'zod'", `'${zod}'`);
  return box.write(name, edit(text));
}

/** What fixing a broken graph file comes to here: a valid graph in its place. */
function fixedAs(box: Sandbox, target: string): void {
  writeFileSync(join(box.dir, target), readFileSync(userGraph(box, 'flaky.ts'), 'utf8'));
}

const review = fixture('review.ts');
const orders = fixture('orders.ts');
const flaky = fixture('flaky.ts');

/**
 * Starts a slow run in the background and returns once its second step is running: the run is
 * live in another process, holding its lease. `stop` kills that process.
 */
async function runningElsewhere(
  box: Sandbox,
  file: string,
  runId: string,
): Promise<{ stop(): Promise<void> }> {
  const child = spawn(process.execPath, [bin, '--db', box.db, 'run', file, '--run-id', runId], {
    cwd: box.dir,
    env: { ...process.env, NO_COLOR: '1', FIXTURE_STEP_MS: '3000' },
  });
  let stdout = '';
  const ended = new Promise((resolve) => child.on('exit', resolve));
  await new Promise<void>((resolve) =>
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('▶ two:1')) resolve();
    }),
  );
  return {
    stop: async () => {
      child.kill('SIGKILL');
      await ended;
    },
  };
}

/** Kills a run with SIGKILL in the middle of its second step: a crash, events after the snapshot. */
async function crashMidway(box: Sandbox, file: string, runId: string): Promise<void> {
  const child = spawn(process.execPath, [bin, '--db', box.db, 'run', file, '--run-id', runId], {
    cwd: box.dir,
    env: { ...process.env, NO_COLOR: '1', FIXTURE_STEP_MS: '2000' },
  });
  let stdout = '';
  const ended = new Promise((resolve) => child.on('exit', resolve));
  await new Promise<void>((resolve) =>
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('▶ two:1')) resolve();
    }),
  );
  child.kill('SIGKILL');
  await ended;
}

const refusals: readonly Refusal[] = [
  {
    code: 'USAGE_INVALID',
    situation: 'an unknown command',
    make: (box) => box.waymark(['frobnicate']),
  },
  {
    code: 'USAGE_INVALID',
    situation: 'a missing argument',
    make: (box) => box.waymark(['run']),
  },
  {
    code: 'USAGE_INVALID',
    situation: 'ls with a --db that names no file',
    make: (box) => box.waymark(['--db', join(box.dir, 'typo.db'), 'ls'], { noDb: true }),
    noCommand: true,
  },
  {
    code: 'USAGE_INVALID',
    situation: 'a run started through the API, which records no graph file',
    make: async (box) => {
      const script = box.write(
        'start.mts',
        `import { run } from ${JSON.stringify(join(root, 'src/index.ts'))};
import { SqliteStore } from ${JSON.stringify(join(root, 'src/sqlite.ts'))};
import review from ${JSON.stringify(review)};
const store = new SqliteStore({ path: process.argv[2] });
await run(review.compile(), { title: 'api' }, { store, runId: 'r' });
await store.close();
`,
      );
      await node(['--import', tsxLoader, script, box.db], { cwd: box.dir, env: {} });
      return box.waymark(['resume', 'r']);
    },
    fill: () => ({ '<graph-file>': review }),
  },
  {
    code: 'BOUND_OVER_BUDGET',
    situation: "a budget below what the graph's worst case can spend",
    make: (box) => box.waymark(['run', fixture('metered.ts'), '--budget', '1tokens']),
    noCommand: true,
  },
  {
    code: 'GRAPH_FILE_INVALID',
    situation: 'the graph file the run recorded was moved',
    make: async (box) => {
      const file = userGraph(box, 'review.ts');
      await box.waymark(['run', file, '--input', '{"title":"T"}', '--run-id', 'r']);
      renameSync(file, join(box.dir, 'moved.ts'));
      return box.waymark(['resume', 'r']);
    },
    fill: (box) => ({ '<graph-file>': join(box.dir, 'moved.ts') }),
  },
  {
    code: 'GRAPH_FILE_INVALID',
    situation: 'a syntax error in the graph file',
    make: (box) => box.waymark(['run', box.write('syntax.ts', "export default graph('x', {;\n")]),
    fix: (box) => fixedAs(box, 'syntax.ts'),
  },
  {
    code: 'GRAPH_FILE_INVALID',
    situation: 'a .js graph written as an ES module in a CommonJS package',
    make: (box) => {
      box.write('package.json', '{ "name": "app" }\n');
      return box.waymark(['validate', box.write('graph.js', 'export default {};\n')]);
    },
    noCommand: true,
  },
  {
    code: 'GRAPH_FILE_INVALID',
    situation: 'a default export that is not a graph',
    make: (box) => box.waymark(['run', fixture('not-a-graph.ts')]),
    noCommand: true,
  },
  {
    code: 'GRAPH_INVALID',
    situation: 'a graph with problems',
    make: (box) => box.waymark(['run', userGraph(box, 'invalid.ts')]),
    fix: (box) => fixedAs(box, 'invalid.ts'),
  },
  {
    code: 'INPUT_INVALID',
    situation: 'input that does not match the state schema',
    make: (box) => box.waymark(['run', review, '--input', '{"title":""}']),
    noCommand: true,
  },
  {
    code: 'LIMIT_KEY_INVALID',
    situation: "input the graph's limits.key function cannot make a key of",
    make: (box) => box.waymark(['run', fixture('limited.ts'), '--input', '{}']),
    noCommand: true,
  },
  {
    code: 'CONTEXT_INVALID',
    situation: "a --context the graph's context schema refuses",
    make: (box) => box.waymark(['run', fixture('tenant.ts'), '--context', '{"tenant":7}']),
    noCommand: true,
  },
  {
    code: 'INPUT_NOT_ALLOWED',
    situation: "input that sets a field outside the graph's input schema",
    make: (box) =>
      box.waymark([
        'run',
        join(root, 'test/subgraph/cli-inputs.ts'),
        '--input',
        '{"title":"T","secret":"x"}',
      ]),
    noCommand: true,
  },
  {
    code: 'RUN_NOT_FOUND',
    situation: 'an unknown run id in a database that exists',
    make: async (box) => {
      await box.waymark(['run', flaky]);
      return box.waymark(['show', 'nope']);
    },
  },
  {
    code: 'RUN_NOT_FOUND',
    situation: 'a run id and no database at all',
    make: (box) => box.waymark(['show', 'nope']),
    noCommand: true,
  },
  {
    code: 'SCHEDULE_INVALID',
    situation: 'schedule add with a cron expression croner cannot read',
    make: (box) =>
      box.waymark(['schedule', 'add', review, '--cron', 'every day', '--input', '{"title":"T"}']),
    noCommand: true,
  },
  {
    code: 'SCHEDULE_NOT_FOUND',
    situation: 'schedule pause of an id no schedule has, in a database that exists',
    make: async (box) => {
      await box.waymark([
        'schedule',
        'add',
        review,
        '--cron',
        '0 9 * * *',
        '--input',
        '{"title":"T"}',
      ]);
      return box.waymark(['schedule', 'pause', 'nope']);
    },
  },
  {
    code: 'SCHEDULE_NOT_FOUND',
    situation: 'schedule rm with no database at all',
    make: (box) => box.waymark(['schedule', 'rm', 'nope']),
  },
  {
    code: 'RUN_EXISTS',
    situation: 'a --run-id taken already',
    make: async (box) => {
      await box.waymark(['run', flaky, '--run-id', 'r']);
      return box.waymark(['run', flaky, '--run-id', 'r']);
    },
  },
  {
    code: 'RUN_OWNED',
    situation: 'resume of a run another process is driving now',
    make: async (box) => {
      const elsewhere = await runningElsewhere(box, fixture('slow.ts'), 'r');
      try {
        return await box.waymark(['resume', 'r']);
      } finally {
        await elsewhere.stop();
      }
    },
  },
  {
    code: 'RUN_LIVE',
    situation: 'rm of a run another process is driving now',
    make: async (box) => {
      const elsewhere = await runningElsewhere(box, fixture('slow.ts'), 'r');
      try {
        return await box.waymark(['rm', 'r']);
      } finally {
        await elsewhere.stop();
      }
    },
  },
  {
    code: 'RUN_WAITING',
    situation: 'rm of a run that waits for an answer, without --force',
    make: async (box) => {
      await box.waymark(['run', review, '--input', '{"title":"T"}', '--run-id', 'r']);
      return box.waymark(['rm', 'r']);
    },
  },
  {
    code: 'RUN_REFERENCED',
    situation: 'rm of a run an unfinished rewind of it started from',
    make: async (box) => {
      await box.waymark(['run', review, '--input', '{"title":"T"}', '--run-id', 'r']);
      await box.waymark(['rewind', 'r', '--to', 'draft', '--run-id', 'r2']);
      return box.waymark(['rm', 'r', '--force']);
    },
  },
  {
    code: 'RUN_NOT_DUE',
    situation: 'resume of a run that sleeps, before it is due',
    make: async (box) => {
      await box.waymark(['run', fixture('sleepy.ts'), '--run-id', 'r']);
      return box.waymark(['resume', 'r']);
    },
  },
  {
    code: 'WAIT_EXPIRED',
    situation: 'an answer after its wait timed out',
    make: async (box) => {
      await box.waymark(['run', fixture('expiring.ts'), '--run-id', 'r']);
      await new Promise((resolve) => setTimeout(resolve, 150));
      return box.waymark(['approve', 'r']);
    },
  },
  {
    code: 'WAIT_CLOSED',
    situation: 'an answer to a wait whose branch a join cancelled',
    make: async (box) => {
      await box.waymark(['run', fixture('raced.ts'), '--run-id', 'r']);
      return box.waymark([
        'answer',
        'r',
        '--request',
        'r/start:1[1]/ask:1',
        '--value',
        '{"pick":"me"}',
      ]);
    },
  },
  {
    code: 'RUN_NOT_RESUMABLE',
    situation: 'resume of a cancelled run',
    make: async (box) => {
      await box.waymark(['run', review, '--input', '{"title":"T"}', '--run-id', 'r']);
      await box.waymark(['cancel', 'r']);
      return box.waymark(['resume', 'r']);
    },
  },
  {
    code: 'RUN_NOT_RESUMABLE',
    situation: 'an answer to a cancelled run',
    make: async (box) => {
      await box.waymark(['run', review, '--input', '{"title":"T"}', '--run-id', 'r']);
      await box.waymark(['cancel', 'r']);
      return box.waymark(['approve', 'r']);
    },
  },
  {
    code: 'GOTO_INVALID',
    situation: 'resume --goto a node the graph does not have',
    make: async (box) => {
      await box.waymark(['run', flaky, '--run-id', 'r'], { env: { FIXTURE_FAIL: '1' } });
      return box.waymark(['resume', 'r', '--goto', 'prepair']);
    },
  },
  {
    code: 'RUN_NOT_CONTINUABLE',
    situation: 'continue of a run that waits for an answer',
    make: async (box) => {
      await box.waymark(['run', review, '--input', '{"title":"T"}', '--run-id', 'r']);
      return box.waymark(['continue', 'r', '--input', '{}']);
    },
  },
  {
    code: 'RUN_NOT_PATCHABLE',
    situation: 'a state patch of a run that succeeded',
    make: async (box) => {
      await box.waymark(['run', flaky, '--run-id', 'r']);
      return box.waymark(['patch', 'r', '--set', '{}', '--reason', 'why not']);
    },
  },
  {
    code: 'RUN_NOT_CANCELLABLE',
    situation: 'cancel of a run that succeeded',
    make: async (box) => {
      await box.waymark(['run', flaky, '--run-id', 'r']);
      return box.waymark(['cancel', 'r']);
    },
  },
  {
    code: 'WAIT_NOT_FOUND',
    situation: 'an answer to a request the run does not have',
    make: async (box) => {
      await box.waymark(['run', review, '--input', '{"title":"T"}', '--run-id', 'r']);
      return box.waymark(['approve', 'r', '--request', 'nope']);
    },
  },
  {
    code: 'WAIT_ALREADY_ANSWERED',
    situation: 'a second answer to the same wait',
    make: async (box) => {
      await box.waymark(['run', review, '--input', '{"title":"T"}', '--run-id', 'r']);
      await box.waymark(['approve', 'r']);
      return box.waymark(['approve', 'r', '--request', 'r/review:1']);
    },
  },
  {
    code: 'ANSWER_INVALID',
    situation: "an answer that does not match the wait's schema",
    make: async (box) => {
      await box.waymark(['run', review, '--input', '{"title":"T"}', '--run-id', 'r']);
      return box.waymark(['answer', 'r', '--value', '{"approved":"yes"}']);
    },
  },
  {
    code: 'SIGNAL_INVALID',
    situation: "a signal whose payload does not match the event's schema",
    make: async (box) => {
      await box.waymark(['run', orders, '--input', '{"orderId":"o"}', '--run-id', 'r']);
      return box.waymark(['signal', 'r', 'payment', '{"paidCents":-1}']);
    },
    noCommand: true,
  },
  {
    code: 'SIGNAL_UNKNOWN',
    situation: 'a signal of a name the graph has no event node for',
    make: async (box) => {
      await box.waymark(['run', orders, '--input', '{"orderId":"o"}', '--run-id', 'r']);
      return box.waymark(['signal', 'r', 'refund', '{}']);
    },
  },
  {
    code: 'GRAPH_MISMATCH',
    situation: 'rewind after the graph was fixed (its hash changed)',
    make: async (box) => {
      const file = userGraph(box, 'capped.ts');
      await box.waymark(['run', file, '--run-id', 'r']);
      writeFileSync(file, readFileSync(file, 'utf8').replace('visits: 2', 'visits: 200'));
      return box.waymark(['rewind', 'r', '--to', 'plan']);
    },
  },
  {
    code: 'GRAPH_MISMATCH',
    situation: 'resume of a run that waits on a node the edited graph no longer has',
    make: async (box) => {
      const file = userGraph(box, 'review.ts');
      await box.waymark(['run', file, '--input', '{"title":"T"}', '--run-id', 'r']);
      writeFileSync(
        file,
        readFileSync(file, 'utf8')
          .replace(".edge('draft', 'review')", ".edge('draft', 'rate')")
          .replace(".edge('review', 'rate')\n", '')
          .replace(/\.node\(\n {4}'review',[\s\S]*?\n {2}\)\n/, ''),
      );
      return box.waymark(['resume', 'r']);
    },
  },
  {
    code: 'GRAPH_MISMATCH',
    situation: 'show of a crashed run under an edited graph',
    make: async (box) => {
      const file = userGraph(box, 'slow.ts');
      await crashMidway(box, file, 'r');
      writeFileSync(file, readFileSync(file, 'utf8').replaceAll("'three'", "'finish'"));
      return box.waymark(['show', 'r']);
    },
  },
  {
    code: 'OPTIONS_INVALID',
    situation: 'rewind to a node the run never reached',
    make: async (box) => {
      await box.waymark(['run', review, '--input', '{"title":"T"}', '--run-id', 'r']);
      return box.waymark(['rewind', 'r', '--to', 'publish']);
    },
  },
  {
    code: 'STORE_CORRUPT',
    situation: 'one run whose checkpoint is damaged',
    make: async (box) => {
      await box.waymark(['run', flaky, '--run-id', 'r']);
      await box.waymark(['run', flaky, '--run-id', 'ok']);
      const db = new Database(box.db);
      db.prepare("UPDATE snapshots SET data = '{' WHERE run_id = 'r'").run();
      db.close();
      return box.waymark(['show', 'r']);
    },
  },
  {
    code: 'STORE_CORRUPT',
    situation: 'a --db file that is not a database',
    make: (box) => box.waymark(['--db', box.write('notes.db', 'notes'), 'ls'], { noDb: true }),
    noCommand: true,
  },
  {
    code: 'STORE_VERSION_UNSUPPORTED',
    situation: 'a database written by a newer waymark',
    make: async (box) => {
      await box.waymark(['run', flaky]);
      const db = new Database(box.db);
      db.prepare('INSERT INTO schema_version (version, applied_at) VALUES (999, 0)').run();
      db.close();
      return box.waymark(['ls']);
    },
  },
  {
    code: 'STORE_UNAVAILABLE',
    situation: 'a --db that is a directory',
    make: (box) => box.waymark(['--db', box.dir, 'ls'], { noDb: true }),
    noCommand: true,
  },
];

/**
 * Codes docs/errors.md lists as thrown, that no test can make the command print, and why. The
 * missing or unbuilt better-sqlite3 (STORE_UNAVAILABLE) is walked in test/package.
 */
const notWalked: Readonly<Record<string, string>> = {
  DECLARATION_INVALID:
    'thrown while a graph file is imported: the command reports it as GRAPH_FILE_INVALID',
  STORE_CONFLICT: 'needs two processes committing to one run in the same instant',
  LEASE_LOST:
    'needs a run taken over from a process that is alive and mid-step: test/runtime/ownership.test.ts pins it',
  STORE_LIMIT: 'needs a run of 4,294,967,295 events',
  RUN_DRAINED:
    'never printed as an error: Ctrl-C gives the run back and says how to resume it (test/cli/follow.test.ts pins those lines)',
  STATE_VERSION_UNKNOWN: 'its hint names no command: it says to declare a migration',
  MIGRATION_FAILED: 'its hint names no command: it says to fix the declared migration',
  RUN_QUEUED:
    "needs a run holding its key's slot in a live process while another waits queued behind it: test/workers/limits.test.ts and test/runtime/limits.test.ts pin the queue",
  INTERNAL: 'a bug: nothing a test can do makes it happen (src/cli/exit.test.ts pins its output)',
};

/** The commands a hint names: each backticked `waymark ...`, placeholders filled. */
function hintedCommands(outcome: Outcome, fill: Readonly<Record<string, string>>): string[] {
  const hint = outcome.errLines.find((l) => l.startsWith('hint: ')) ?? '';
  return [...hint.matchAll(/`(waymark [^`]*)`/g)].map((m) => filled(m[1]!, fill));
}

/** The commands on the `next:` lines (and the lines under them) of a run that stopped. */
function nextCommands(outcome: Outcome, fill: Readonly<Record<string, string>>): string[] {
  const lines = [...outcome.lines, ...outcome.errLines];
  return lines
    .map((l) => /^(?:next:)?\s+(waymark .*?)(?: {2}.*)?$/.exec(l)?.[1])
    .filter((c): c is string => c !== undefined)
    .map((c) => filled(c, fill));
}

function filled(command: string, fill: Readonly<Record<string, string>>): string {
  let text = command;
  for (const [placeholder, value] of Object.entries(fill)) {
    text = text.replaceAll(`'${placeholder}'`, `'${value}'`).replaceAll(placeholder, value);
  }
  expect(text, `a placeholder left to fill in: ${text}`).not.toMatch(/<[a-z-]+>/);
  return text;
}

/** Splits a command line the way a POSIX shell does for what the CLI prints: words, '...'. */
function words(command: string): string[] {
  const out: string[] = [];
  for (const m of command.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)) {
    out.push(m[1] !== undefined ? m[1].replaceAll("'\\''", "'") : m[2]!);
  }
  return out;
}

/** Runs a printed command in the sandbox and asserts nothing refuses it. */
async function runAsPrinted(box: Sandbox, command: string, refused: string): Promise<void> {
  const [waymark, ...args] = words(command);
  expect(waymark).toBe('waymark');
  const out = await call(args, { cwd: box.dir, env: { WAYMARK_CMS_FILE: box.cms } });
  const error = out.errLines.find((l) => l.startsWith('error '));
  expect(error ?? '', `\`${command}\`, hinted after ${refused}, was refused`).toBe('');
  expect(out.code, `\`${command}\`\n${out.stdout}\n${out.stderr}`).not.toBe(2);
}

describe.concurrent('every hint names a command that is not refused', {
  timeout: testTimeoutMs,
}, () => {
  for (const refusal of refusals) {
    it(`${refusal.code}: ${refusal.situation}`, async () => {
      const box = sandbox();
      const out = await refusal.make(box);
      expect(out.errLines[0], out.stderr).toMatch(new RegExp(`^error ${refusal.code}: `));
      const commands = hintedCommands(out, refusal.fill?.(box) ?? {});
      if (refusal.noCommand) {
        expect(commands, out.stderr).toEqual([]);
        return;
      }
      expect(commands.length, `the hint names no command:\n${out.stderr}`).toBeGreaterThan(0);
      refusal.fix?.(box);
      for (const command of commands) await runAsPrinted(box, command, refusal.code);
    });
  }

  it('docs/errors.md: every code the command can print is walked above, or said why not', () => {
    const docs = readFileSync(join(root, 'docs', 'errors.md'), 'utf8');
    const printable = [...docs.matchAll(/^- `([A-Z_]+)` \((thrown|the `waymark` command)/gm)].map(
      (m) => m[1]!,
    );
    expect(printable.length).toBeGreaterThan(15);
    const walked = new Set(refusals.map((r) => r.code));
    const missing = printable.filter((code) => !walked.has(code) && !(code in notWalked));
    expect(missing).toEqual([]);
  });
});

describe.concurrent('every next command after a run stops works as printed', {
  timeout: testTimeoutMs,
}, () => {
  const cases: readonly {
    readonly situation: string;
    readonly make: (box: Sandbox) => Promise<Outcome>;
    readonly fill?: Readonly<Record<string, string>>;
  }[] = [
    {
      situation: 'waiting for a yes-no answer: approve, or reject with a note',
      make: (box) => box.waymark(['run', review, '--input', '{"title":"T"}']),
      fill: { '<text>': 'the title is wrong' },
    },
    {
      situation: 'waiting for any other answer',
      make: async (box) => {
        await box.waymark(['run', review, '--input', '{"title":"T"}', '--run-id', 'r']);
        return box.waymark(['approve', 'r']);
      },
      fill: { '<json>': '{"stars":4}' },
    },
    {
      situation: 'failed, with its failed step left to run again',
      make: (box) => box.waymark(['run', flaky], { env: { FIXTURE_FAIL: '1' } }),
    },
    {
      situation: 'failed on a visit cap: rewind, or a new run reusing it',
      make: (box) => box.waymark(['run', userGraph(box, 'capped.ts')]),
    },
    {
      situation: 'failed on a join: rewind, or a new run reusing it',
      make: (box) => box.waymark(['run', userGraph(box, 'joined.ts')]),
    },
    {
      situation: 'failed on a denied read in a router: rewind, or a new run reusing it',
      make: (box) => box.waymark(['run', userGraph(box, 'nosy.ts')]),
    },
    {
      situation: 'stopped at a breakpoint (--pause-before): resume',
      make: (box) => box.waymark(['run', flaky, '--pause-before', 'work']),
    },
    {
      situation: 'an answer recorded with --no-resume',
      make: async (box) => {
        await box.waymark(['run', review, '--input', '{"title":"T"}', '--run-id', 'r']);
        return box.waymark(['approve', 'r', '--no-resume']);
      },
    },
  ];
  for (const c of cases) {
    it(c.situation, async () => {
      const box = sandbox();
      const out = await c.make(box);
      const commands = nextCommands(out, c.fill ?? {});
      expect(commands.length, out.stdout).toBeGreaterThan(0);
      // Each from the same stopped run: the database is copied, so one command cannot change
      // what the next one finds.
      const db = readFileSync(box.db);
      for (const command of commands) {
        writeFileSync(box.db, db);
        rmSync(`${box.db}-wal`, { force: true });
        rmSync(`${box.db}-shm`, { force: true });
        await runAsPrinted(box, command, `a run that stopped (${c.situation})`);
      }
    });
  }
});
