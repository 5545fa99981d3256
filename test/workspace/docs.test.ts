import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { type CompiledGraph, type Patch, run } from '../../src/index.js';
import { makeRepo } from '../support/git-repo.js';

beforeAll(() => {
  process.env.WAYMARK_WORKSPACES = mkdtempSync(join(tmpdir(), 'waymark-ws-'));
});

it('the example of docs/workspaces.md runs as written: both branches merge and the merged tree passes its test', async () => {
  const doc = readFileSync(new URL('../../docs/workspaces.md', import.meta.url), 'utf8');
  const code = /```ts\n([\s\S]*?)```/.exec(doc)?.[1];
  expect(code).toBeDefined();
  const dir = new URL('../.tmp/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  const file = new URL('workspaces-example.ts', dir);
  writeFileSync(file, code!.replace("from 'waymark'", "from '../../src/index.js'"));
  const { fixAndTest } = await import(file.href);
  const repo = makeRepo({
    'package.json': '{ "type": "module" }\n',
    'src/price.js': 'export function price(n) {\n  return n * 100;\n}\n',
  });
  const result = await run(
    fixAndTest(repo) as CompiledGraph<{ code: Patch | null; passed: boolean }, object>,
    {},
  );
  expect(result.status).toBe('succeeded');
  expect(result.state.passed).toBe(true);
  expect((result.state.code as Patch).files.map((f) => f.path)).toEqual([
    'src/price.js',
    'test/price.test.js',
  ]);
});
