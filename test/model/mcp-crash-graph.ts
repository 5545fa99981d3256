import { appendFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tool } from 'ai';
import { z } from 'zod';
import { END, graph } from '../../src/index.js';
import { agent, scriptedModel } from '../../src/model/index.js';

// The graph of the MCP crash test, shared by the child that is killed and the test that resumes
// it: an agent posts a comment through an effect MCP tool, then waits in a local tool, which
// never returns in a process started with HANG=1.

const server = fileURLToPath(new URL('./fixtures/mcp-stdio-server.mjs', import.meta.url));

export function commentGraph(calls: string, log: string) {
  const model = scriptedModel([
    { toolCalls: [{ toolName: 'post_comment', input: { body: 'root cause: float price' } }] },
    { toolCalls: [{ toolName: 'wait', input: {} }] },
    { object: { summary: 'commented' } },
  ]);
  const wait = tool({
    description: 'Waits for the CI to finish.',
    inputSchema: z.object({}),
    execute: async () => {
      appendFileSync(log, `wait ${process.pid}\n`);
      if (process.env.HANG === '1') await new Promise(() => {});
      return 'done';
    },
  });
  return graph('mcp-crash', { state: z.object({ summary: z.string().default('') }) })
    .node(
      'investigate',
      agent({
        model,
        prompt: () => 'Comment the root cause on the report.',
        output: z.object({ summary: z.string() }),
        tools: { wait },
        mcp: {
          repo: {
            transport: {
              type: 'stdio',
              command: process.execPath,
              args: [server],
              env: { MCP_CALLS: calls },
            },
            allow: ['post_comment'],
            effects: ['post_comment'],
          },
        },
        maxTurns: 4,
      }),
      { writes: ['summary'] },
    )
    .edge('investigate', END)
    .entry('investigate')
    .compile();
}
