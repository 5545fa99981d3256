import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { type CompiledGraph, run } from '../../src/index.js';
import { scriptedModel } from '../../src/model/index.js';
import { makeRepo } from '../support/git-repo.js';

it("the MCP example of docs/models.md runs as written, against the bug-triage example's MCP server", async () => {
  const doc = readFileSync(new URL('../../docs/models.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## MCP tools'));
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  expect(code).toBeDefined();
  const dir = new URL('../.tmp/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  const file = new URL('models-mcp-example.ts', dir);
  writeFileSync(
    file,
    code!
      .replace("from 'waymark'", "from '../../src/index.js'")
      .replace("from 'waymark/model'", "from '../../src/model/index.js'"),
  );
  const { investigator } = await import(file.href);
  const repo = makeRepo({
    'billing/invoice.mjs': 'export const total = (l) => Math.floor(l * 100) / 100;\n',
  });
  const comments = join(mkdtempSync(join(tmpdir(), 'waymark-mcp-docs-')), 'comments.jsonl');
  const server = fileURLToPath(
    new URL('../../examples/bug-triage/repo-tools.mjs', import.meta.url),
  );
  const model = scriptedModel([
    { toolCalls: [{ toolName: 'read_file', input: { path: 'billing/invoice.mjs' } }] },
    { toolCalls: [{ toolName: 'post_comment', input: { body: 'Math.floor truncates cents' } }] },
    { object: { note: 'total() floors: round instead' } },
  ]);
  const result = await run(
    investigator(model, { server, repo, comments }) as CompiledGraph<{ note: string }, object>,
    {},
  );
  expect(result.status).toBe('succeeded');
  expect(result.state.note).toBe('total() floors: round instead');
  expect(model.requests[1]!.text).toContain('Math.floor(l * 100)');
  const posted = readFileSync(comments, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  expect(posted).toEqual([
    {
      id: 1,
      key: `${result.runId}/investigate:1/mcp:repo.post_comment#1`,
      body: 'Math.floor truncates cents',
    },
  ]);
});
