// Errors that keep their facts: every error the command prints has a code, names the path it
// is about, and a hint that fits what happened. Nothing is created just to say something is
// missing.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import {
  expectError,
  expectExit,
  expectJsonError,
  fixture,
  root,
  sandbox,
  testTimeoutMs,
} from './support.js';

const flaky = fixture('flaky.ts');

describe.concurrent('--db that is not a waymark database file', { timeout: testTimeoutMs }, () => {
  it('a directory: STORE_UNAVAILABLE naming it, in plain and --json output', async () => {
    const box = sandbox();
    const dir = join(box.dir, 'runs');
    mkdirSync(dir);
    const [plain, json] = await Promise.all([
      box.waymark(['--db', dir, 'run', flaky], { noDb: true }),
      box.waymark(['--json', '--db', dir, 'ls'], { noDb: true }),
    ]);
    expectError(plain, 'STORE_UNAVAILABLE', { exit: 1 });
    expect(plain.errLines).toEqual([
      `error STORE_UNAVAILABLE: ${dir} is a directory, not a database file`,
      'hint: --db names a file, not a directory: e.g. --db <directory>/waymark.db',
    ]);
    const error = expectJsonError(json, 'STORE_UNAVAILABLE', 1);
    expect(error.details).toEqual({ path: dir, reason: 'directory' });
  });

  it('a path through a file: STORE_UNAVAILABLE, not an uncoded mkdir error', async () => {
    const box = sandbox();
    const file = box.write('notes.txt', 'not a folder');
    const out = await box.waymark(['--db', join(file, 'w.db'), 'run', flaky], { noDb: true });
    expectError(out, 'STORE_UNAVAILABLE', { exit: 1 });
    expect(out.errLines[0]).toContain(`cannot make the directory of ${join(file, 'w.db')}`);
    expect(out.errLines[1]).toBe(
      'hint: check the --db path: one of its folders is a file, or may not be written',
    );
  });

  it('a file that is not SQLite: STORE_CORRUPT saying so, not "only this run is affected"', async () => {
    const box = sandbox();
    const file = box.write('notes.db', 'these are my notes, not a database\n'.repeat(200));
    const [ls, run] = await Promise.all([
      box.waymark(['--db', file, 'ls'], { noDb: true }),
      box.waymark(['--db', file, 'run', flaky], { noDb: true }),
    ]);
    for (const out of [ls, run]) {
      expectError(out, 'STORE_CORRUPT', { exit: 1 });
      expect(out.errLines).toEqual([
        `error STORE_CORRUPT: ${file} is not a waymark database`,
        'hint: waymark keeps runs in a SQLite file it created: check --db',
      ]);
    }
    expect(readFileSync(file, 'utf8')).toMatch(/^these are my notes/);
  });

  it("another application's SQLite database: refused, and left exactly as it was", async () => {
    const box = sandbox();
    const file = join(box.dir, 'app.db');
    const other = new Database(file);
    other.exec("CREATE TABLE users (name TEXT); INSERT INTO users VALUES ('ada')");
    other.close();
    const before = readFileSync(file);
    const [ls, run] = await Promise.all([
      box.waymark(['--db', file, 'ls'], { noDb: true }),
      box.waymark(['--db', file, 'run', flaky], { noDb: true }),
    ]);
    for (const out of [ls, run]) {
      expectError(out, 'STORE_CORRUPT', { exit: 1 });
      expect(out.errLines[0]).toBe(
        `error STORE_CORRUPT: ${file} is not a waymark database: it holds other tables (users)`,
      );
    }
    // No waymark tables, no WAL mode written into it.
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(readdirSync(box.dir).filter((f) => f.startsWith('app.db'))).toEqual(['app.db']);
  });
});

describe.concurrent('a command that only reads, given a mistyped --db', {
  timeout: testTimeoutMs,
}, () => {
  it('ls, show and trace say the file does not exist, and create no folder and no database', async () => {
    const box = sandbox();
    const typo = join(box.dir, 'ruhns', 'waymark.db');
    const [ls, show, trace] = await Promise.all([
      box.waymark(['--db', typo, 'ls'], { noDb: true }),
      box.waymark(['--db', typo, 'show', 'r-1'], { noDb: true }),
      box.waymark(['--db', typo, 'trace', 'r-1'], { noDb: true }),
    ]);
    expectError(ls, 'USAGE_INVALID');
    expect(ls.errLines[0]).toBe(
      `error USAGE_INVALID: --db ${typo}: there is no database at ${typo}`,
    );
    for (const out of [show, trace]) {
      expectError(out, 'RUN_NOT_FOUND');
      expect(out.errLines[0]).toBe(
        `error RUN_NOT_FOUND: there is no run "r-1": no database at ${typo}`,
      );
    }
    expect(existsSync(join(box.dir, 'ruhns'))).toBe(false);
  });

  it('ls with no --db and no database yet: no runs, and nothing created', async () => {
    const box = sandbox();
    const out = await box.waymark(['ls'], { noDb: true });
    expectExit(out, 0);
    expect(out.lines).toEqual([
      `no runs (no database at ${join(box.dir, '.waymark', 'waymark.db')} yet)`,
    ]);
    expect(existsSync(join(box.dir, '.waymark'))).toBe(false);
  });
});

describe.concurrent('a graph file with a syntax error', { timeout: testTimeoutMs }, () => {
  // Written at test time: a broken file in the repository would break typecheck and lint.
  const broken = (box: ReturnType<typeof sandbox>, name: string) =>
    box.write(name, "import { graph } from 'waymark';\nexport default graph('x', {;\n");

  it("keeps esbuild's location line in plain, --verbose and --json output", async () => {
    const box = sandbox();
    const file = broken(box, 'syntax.ts');
    const where = `${file}:2:27: ERROR: Expected identifier but found ";"`;
    const [plain, verbose, json] = await Promise.all([
      box.waymark(['run', file]),
      box.waymark(['--verbose', 'validate', file]),
      box.waymark(['--json', 'graph', file]),
    ]);
    expectError(plain, 'GRAPH_FILE_INVALID');
    expect(plain.errLines).toEqual([
      `error GRAPH_FILE_INVALID: ${file} does not load: ${where}`,
      `hint: fix the line above; \`waymark validate ${file}\` checks the file again`,
    ]);
    expectExit(verbose, 2);
    expect(verbose.errLines[0]).toBe(`error GRAPH_FILE_INVALID: ${file} does not load: ${where}`);
    expect(verbose.stderr).toMatch(/^\s+at .*load-graph\.ts/m);
    const error = expectJsonError(json, 'GRAPH_FILE_INVALID');
    expect(error.message).toBe(`${file} does not load: ${where}`);
    expect(error.details).toEqual({ path: file, reason: 'syntax' });
  });

  it('in JavaScript too, where V8 does not say where', async () => {
    const box = sandbox();
    const file = broken(box, 'syntax.mjs');
    const out = await box.waymark(['validate', file]);
    expectError(out, 'GRAPH_FILE_INVALID');
    expect(out.errLines[0]).toBe(
      `error GRAPH_FILE_INVALID: ${file} does not load: ${file}:2:27: ERROR: Expected identifier but found ";"`,
    );
  });

  it('a .js graph written as an ES module in a CommonJS package: the hint names the fix', async () => {
    const box = sandbox();
    writeFileSync(join(box.dir, 'package.json'), '{ "name": "app" }\n');
    const file = box.write('graph.js', "export default { not: 'a graph' };\n");
    const out = await box.waymark(['validate', file]);
    expectError(out, 'GRAPH_FILE_INVALID');
    expect(out.errLines).toEqual([
      `error GRAPH_FILE_INVALID: ${file} does not load: it is written as an ES module, but is loaded as CommonJS (${join(box.dir, 'package.json')} has no "type": "module")`,
      `hint: rename the file to .mjs, or add "type": "module" to ${join(box.dir, 'package.json')}`,
    ]);
  });

  it('a .ts graph in a CommonJS package loads: TypeScript graph files are ES modules', async () => {
    const box = sandbox();
    writeFileSync(join(box.dir, 'package.json'), '{ "name": "app", "type": "commonjs" }\n');
    // The same graph as the fixture, importing waymark as a user does (zod from this clone).
    const zod = pathToFileURL(join(root, 'node_modules', 'zod', 'index.js')).href;
    const file = box.write(
      'graph.ts',
      readFileSync(flaky, 'utf8')
        .replaceAll('../../../src/index.js', 'waymark')
        .replaceAll("'zod'", `'${zod}'`),
    );
    const out = await box.waymark(['validate', file]);
    expectExit(out, 0);
    expect(out.stdout).toContain('graph "flaky" v1 is valid');
  });
});

describe.concurrent('a failure nothing expected', { timeout: testTimeoutMs }, () => {
  it('a default export that only looks like a compiled graph: GRAPH_FILE_INVALID, not a crash', async () => {
    const out = await sandbox().waymark(['validate', fixture('broken-export.ts')]);
    expectError(out, 'GRAPH_FILE_INVALID');
    expect(out.errLines[0]).toContain(
      'has a default export that looks like a compiled graph but is not one',
    );
  });
});
