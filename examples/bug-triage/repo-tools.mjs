// A local MCP server over stdio for the bug-triage example: tools over one repository.
// read_file and list_files only read; post_comment acts on the outside world (it appends the
// comment to a JSON-lines file, our stand-in for the tracker) and dedupes on its idempotency
// key, as a tracker's API would. delete_file exists so that a node can refuse it.
// Usage: node repo-tools.mjs <repository> <comments-file>
import { appendFileSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const [repo, comments] = process.argv.slice(2).map((p) => resolve(p));
const inside = (path) => {
  const target = resolve(repo, path);
  if (!target.startsWith(repo + sep)) throw new Error(`${path} is outside the repository`);
  return target;
};
const text = (t) => ({ content: [{ type: 'text', text: t }] });

const server = new McpServer({ name: 'repo-tools', version: '1.0.0' });
server.registerTool(
  'read_file',
  {
    description: 'Reads a file of the repository, by its path from the root.',
    inputSchema: { path: z.string() },
    annotations: { readOnlyHint: true },
  },
  async ({ path }) => text(readFileSync(inside(path), 'utf8')),
);
server.registerTool(
  'list_files',
  {
    description: 'Lists the files of the repository.',
    inputSchema: {},
    annotations: { readOnlyHint: true },
  },
  async () =>
    text(
      readdirSync(repo, { recursive: true, encoding: 'utf8' })
        .filter((p) => !p.startsWith('.git') && p.includes('.'))
        .map((p) => relative(repo, join(repo, p)))
        .sort()
        .join('\n'),
    ),
);
server.registerTool(
  'post_comment',
  {
    description: 'Posts a comment on the bug report.',
    inputSchema: { body: z.string(), idempotencyKey: z.string().optional() },
    annotations: { destructiveHint: true },
  },
  async ({ body, idempotencyKey }) => {
    const posted = existsSync(comments)
      ? readFileSync(comments, 'utf8')
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l))
      : [];
    const same = posted.find((c) => idempotencyKey && c.key === idempotencyKey);
    if (same) return text(`comment ${same.id} (already posted)`);
    const id = posted.length + 1;
    appendFileSync(comments, `${JSON.stringify({ id, key: idempotencyKey ?? null, body })}\n`);
    return text(`comment ${id} posted`);
  },
);
server.registerTool(
  'delete_file',
  {
    description: 'Deletes a file of the repository.',
    inputSchema: { path: z.string() },
    annotations: { destructiveHint: true },
  },
  async ({ path }) => {
    rmSync(inside(path));
    return text(`deleted ${path}`);
  },
);

process.stdin.on('end', () => process.exit(0));
await server.connect(new StdioServerTransport());
