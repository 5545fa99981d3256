import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { END, type ErrorValue, graph, resume, run, type StreamEvent } from '../../src/index.js';
import {
  agent,
  type McpServers,
  type ScriptedResponse,
  scriptedModel,
  toolCallEvent,
} from '../../src/model/index.js';
import { SqliteStore } from '../../src/sqlite.js';
// @ts-expect-error: a plain JavaScript fixture, shared with the stdio server's process
import { repoToolsServer } from './fixtures/mcp-tools.mjs';
import { commentGraph } from './mcp-crash-graph.js';

const stdioServer = fileURLToPath(new URL('./fixtures/mcp-stdio-server.mjs', import.meta.url));

const State = z.object({
  summary: z.string().default(''),
  error: z.custom<ErrorValue>().nullable().default(null),
});
const Summary = z.object({ summary: z.string() });

/** The calls the server served, one `<tool> <argument>` line each. */
const served = (calls: string) =>
  existsSync(calls) ? readFileSync(calls, 'utf8').trim().split('\n').filter(Boolean) : [];

function stdio(calls: string, allow: string[], effects: string[] = []): McpServers {
  return {
    repo: {
      transport: {
        type: 'stdio',
        command: process.execPath,
        args: [stdioServer],
        env: { MCP_CALLS: calls },
      },
      allow,
      ...(effects.length > 0 && { effects }),
    },
  };
}

function triage(script: ScriptedResponse[], mcp: McpServers, maxToolCalls?: number) {
  const model = scriptedModel(script);
  const g = graph('mcp-agent', { state: State })
    .node(
      'investigate',
      agent({
        model,
        prompt: () => 'Why is 0.29 priced at 28?',
        output: Summary,
        mcp,
        maxTurns: 6,
        ...(maxToolCalls !== undefined && { maxToolCalls }),
      }),
      { writes: ['summary'], onError: 'caught' },
    )
    .node('caught', (_s, ctx) => ({ error: ctx.error ?? null }), {
      terminal: true,
      writes: ['error'],
    })
    .edge('investigate', END)
    .entry('investigate')
    .compile();
  return { g, model };
}

const callsFile = () => join(mkdtempSync(join(tmpdir(), 'waymark-mcp-')), 'calls');
const read = { toolCalls: [{ toolName: 'read_file', input: { path: 'src/price.js' } }] };
const answer = { object: { summary: 'price() multiplies floats: round it' } };

describe('an agent node with a stdio MCP server', () => {
  it('calls an allowed tool, and the call is in the trace and the stream with its input, result and duration', async () => {
    const calls = callsFile();
    const { g } = triage([read, answer], stdio(calls, ['read_file']));
    const told: StreamEvent[] = [];
    const result = await run(g, {}, { watch: (e) => told.push(e) });
    expect(result.status).toBe('succeeded');
    expect(result.state.summary).toBe('price() multiplies floats: round it');
    expect(served(calls)).toEqual(['read_file src/price.js']);
    const turn = result.trace.entries.find((e) => e.node === 'investigate')!.turns![0]!;
    expect(turn.toolCalls).toEqual(['read_file']);
    expect(turn.tools).toEqual([
      {
        tool: 'repo.read_file',
        input: { path: 'src/price.js' },
        output: {
          content: [{ type: 'text', text: 'export function price(n) {\n  return n * 100;\n}\n' }],
          isError: false,
        },
        durationMs: expect.any(Number),
      },
    ]);
    const event = told.find((e) => e.type === 'custom' && e.name === toolCallEvent);
    expect(event).toMatchObject({ node: 'investigate', data: turn.tools![0] });
  });

  it('refuses a tool the node does not allow with MCP_TOOL_DENIED: the server never sees it, the model is told', async () => {
    const calls = callsFile();
    const { g, model } = triage(
      [{ toolCalls: [{ toolName: 'delete_branch', input: { name: 'main' } }] }, answer],
      stdio(calls, ['read_file']),
    );
    const result = await run(g, {});
    expect(result.status).toBe('succeeded');
    expect(served(calls)).toEqual([]);
    // Only the allowed tool was offered; the refused call came back to the model as an error.
    expect(model.requests[0]!.tools).toEqual(['read_file']);
    expect(model.requests[1]!.text).toContain('delete_branch');
    const turn = result.trace.entries.find((e) => e.node === 'investigate')!.turns![0]!;
    expect(turn.tools).toEqual([
      {
        tool: 'repo.delete_branch',
        input: { name: 'main' },
        error: { code: 'MCP_TOOL_DENIED', message: expect.stringContaining('does not allow') },
        durationMs: 0,
      },
    ]);
  });

  it('stops the agent with BUDGET_EXCEEDED once it used its maxToolCalls, without making the call past it', async () => {
    const calls = callsFile();
    const { g } = triage([read, read, read, answer], stdio(calls, ['read_file']), 2);
    const result = await run(g, {});
    const error = result.state.error as ErrorValue;
    expect(error.code).toBe('BUDGET_EXCEEDED');
    expect(error.class).toBe('budget');
    expect(error.details).toEqual({ limit: 'node.maxToolCalls', max: 2, spent: 3 });
    expect(served(calls)).toEqual(['read_file src/price.js', 'read_file src/price.js']);
  });

  it('fails the node with MCP_TOOL_UNKNOWN when it allows a tool the server does not have, before any model call', async () => {
    const { g, model } = triage([answer], stdio(callsFile(), ['read_flie']));
    const result = await run(g, {});
    expect((result.state.error as ErrorValue).code).toBe('MCP_TOOL_UNKNOWN');
    expect(model.requests).toEqual([]);
  });

  it('fails the node with MCP_SERVER_FAILED when the server cannot start', async () => {
    const { g } = triage([answer], {
      repo: { transport: { type: 'stdio', command: '/no/such/server' }, allow: ['read_file'] },
    });
    const result = await run(g, {});
    expect((result.state.error as ErrorValue).code).toBe('MCP_SERVER_FAILED');
  });
});

describe('an agent node with an HTTP MCP server', () => {
  let server: Server;
  let url: string;
  let calls: string;
  beforeAll(async () => {
    calls = callsFile();
    // Stateless Streamable HTTP (no session id generator): a server and a transport per request.
    server = createServer(async (req, res) => {
      const mcp = repoToolsServer(calls);
      const transport = new StreamableHTTPServerTransport({});
      res.on('close', () => {
        void transport.close();
        void mcp.close();
      });
      await mcp.connect(transport);
      await transport.handleRequest(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('calls an allowed tool over HTTP on 127.0.0.1', async () => {
    const { g } = triage([read, answer], {
      repo: { transport: { type: 'http', url }, allow: ['read_file'] },
    });
    const result = await run(g, {});
    expect(result.status).toBe('succeeded');
    expect(result.state.summary).toBe('price() multiplies floats: round it');
    expect(served(calls)).toEqual(['read_file src/price.js']);
  });
});

describe('an effect MCP tool', () => {
  it('runs once across a crash and a resume: the resumed agent gets the recorded result, the server is not asked again', async () => {
    const work = mkdtempSync(join(tmpdir(), 'waymark-mcp-crash-'));
    const [db, calls, log, runId] = [
      join(work, 'runs.db'),
      join(work, 'calls'),
      join(work, 'log'),
      'mcp-crash-1',
    ];
    const child = fileURLToPath(new URL('./mcp-crash-child.ts', import.meta.url));
    const proc = spawn(process.execPath, ['--import', 'tsx', child, db, calls, log, runId], {
      env: { ...process.env, HANG: '1' },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const exited = new Promise((resolve) =>
      proc.on('exit', (code, signal) => resolve(signal ?? code)),
    );
    const key = `${runId}/investigate:1/mcp:repo.post_comment#1`;
    const store = new SqliteStore({ path: db });
    try {
      const until = Date.now() + 60_000;
      for (;;) {
        const waiting = existsSync(log) && readFileSync(log, 'utf8').includes('wait ');
        if (waiting && existsSync(db) && (await store.getEffect(runId, key).catch(() => undefined)))
          break;
        if (Date.now() > until) throw new Error('the child never reached its wait');
        await new Promise((r) => setTimeout(r, 50));
      }
      proc.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
      expect(served(calls)).toEqual([`post_comment ${key} root cause: float price`]);

      const result = await resume(store, commentGraph(calls, log), runId);
      expect(result.status).toBe('succeeded');
      expect(result.state.summary).toBe('commented');
      // The comment was posted once, with the run's key; the resumed call read the ledger.
      expect(served(calls)).toEqual([`post_comment ${key} root cause: float price`]);
      const turn = result.trace.entries.find((e) => e.node === 'investigate')!.turns![0]!;
      expect(turn.tools).toEqual([
        expect.objectContaining({ tool: 'repo.post_comment', effect: key }),
      ]);
    } finally {
      proc.kill('SIGKILL');
      await store.close();
    }
  }, 120_000);
});
