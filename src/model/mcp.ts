import type { ToolSet } from 'ai';
import { isWaymarkError, WaymarkError } from '../error/waymark-error.js';

/**
 * How an agent node reaches an MCP server: a local program spoken to over stdio, or a URL
 * (Streamable HTTP).
 *
 * @example
 * { type: 'stdio', command: 'node', args: ['tools/server.mjs'] }
 * { type: 'http', url: 'http://127.0.0.1:8931/mcp' }
 */
export type McpTransport =
  | {
      readonly type: 'stdio';
      readonly command: string;
      readonly args?: readonly string[];
      /** The server's environment: these variables plus PATH, HOME and the like (the AI SDK's default). */
      readonly env?: Readonly<Record<string, string>>;
      readonly cwd?: string;
    }
  | {
      readonly type: 'http';
      readonly url: string;
      readonly headers?: Readonly<Record<string, string>>;
    };

/**
 * One MCP server of an agent node, under the node's capabilities: the model is offered only the
 * tools on `allow` (a call to another tool the server has is refused with `MCP_TOOL_DENIED`),
 * and the tools on `effects` run through `ctx.effect`, once per call across retries and resumes.
 *
 * @example
 * mcp: { repo: { transport: { type: 'stdio', command: 'node', args: ['server.mjs'] }, allow: ['read_file', 'post_comment'], effects: ['post_comment'] } }
 */
export interface McpServer {
  readonly transport: McpTransport;
  /** The tools the model may call, by the server's names. Required: nothing is allowed by default. */
  readonly allow: readonly string[];
  /**
   * The allowed tools that act on the outside world. Each call is an effect named
   * `mcp:<server>.<tool>#<n>`; a tool whose input has an `idempotencyKey` property gets the key.
   * MCP's own hints (`readOnlyHint`, `destructiveHint`) are the server's word and are not trusted.
   */
  readonly effects?: readonly string[];
  /** Most time one call may take; default 60,000 ms. */
  readonly timeoutMs?: number;
}

/** The MCP servers of an agent node, by the name its records use (`repo.read_file`). */
export type McpServers = Readonly<Record<string, McpServer>>;

/** One listed tool of a connected server, with what the node declared of it. */
export interface McpTool {
  readonly server: string;
  readonly name: string;
  readonly tool: ToolSet[string];
  readonly effect: boolean;
  readonly timeoutMs: number;
  /** Its input has an `idempotencyKey` property: an effect passes its key there. */
  readonly takesKey: boolean;
}

/** The node's connected servers: the tools it may offer, the names it refuses, and the close. */
export interface McpConnection {
  readonly tools: readonly McpTool[];
  /** Tools a server has that the node does not allow, by name: a call to one is refused. */
  readonly denied: ReadonlyMap<string, string>;
  close(): Promise<void>;
}

type McpModule = typeof import('@ai-sdk/mcp');
type StdioModule = typeof import('@ai-sdk/mcp/mcp-stdio');
type Client = Awaited<ReturnType<McpModule['createMCPClient']>>;

/**
 * Connects to every server of an agent node for one attempt, lists its tools, and checks the
 * node's lists against them: an allowed or effect tool no server has is `MCP_TOOL_UNKNOWN`,
 * and so is a tool two servers offer under one name. Closed by the caller when the attempt's
 * model loop is over (not before: a tool may still be running).
 * @throws WaymarkError `MCP_CLIENT_MISSING`, `MCP_SERVER_FAILED`, `MCP_TOOL_UNKNOWN`.
 *
 * @example
 * const mcp = await connectMcp('investigate', servers, ctx.signal);
 */
export async function connectMcp(
  node: string,
  servers: McpServers,
  signal: AbortSignal,
): Promise<McpConnection> {
  const clients: Client[] = [];
  const close = async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
  };
  try {
    const { createMCPClient } = await load(node);
    const tools: McpTool[] = [];
    const denied = new Map<string, string>();
    for (const [server, declared] of Object.entries(servers)) {
      let client: Client;
      let listed: Awaited<ReturnType<Client['listTools']>>;
      try {
        client = await createMCPClient({
          transport: await transportOf(node, declared.transport),
          clientName: `waymark:${node}`,
          initializationOptions: { signal },
        });
        clients.push(client);
        listed = await client.listTools({ options: { signal } });
      } catch (cause) {
        if (isWaymarkError(cause)) throw cause;
        throw new WaymarkError(
          'MCP_SERVER_FAILED',
          `node "${node}": MCP server "${server}" could not be reached: ${(cause as Error).message}`,
          { cause, details: { server } },
        );
      }
      const allow = new Set(declared.allow);
      const effects = new Set(declared.effects ?? []);
      const names = new Set(listed.tools.map((t) => t.name));
      for (const name of [...allow, ...effects]) {
        if (!names.has(name)) throw unknown(node, server, name, 'has no such tool');
        if (effects.has(name) && !allow.has(name))
          throw unknown(node, server, name, 'lists it in effects but not in allow');
      }
      const offered = client.toolsFromDefinitions({
        ...listed,
        tools: listed.tools.filter((t) => allow.has(t.name)),
      });
      for (const def of listed.tools) {
        if (tools.some((t) => t.name === def.name) || denied.has(def.name)) {
          if (allow.has(def.name))
            throw unknown(node, server, def.name, 'shares this name with another server');
          continue;
        }
        if (!allow.has(def.name)) {
          denied.set(def.name, server);
          continue;
        }
        const properties = (def.inputSchema as { properties?: Record<string, unknown> }).properties;
        tools.push({
          server,
          name: def.name,
          tool: offered[def.name]! as ToolSet[string],
          effect: effects.has(def.name),
          timeoutMs: declared.timeoutMs ?? 60_000,
          takesKey: properties !== undefined && Object.hasOwn(properties, 'idempotencyKey'),
        });
      }
    }
    return { tools, denied, close };
  } catch (error) {
    await close();
    throw error;
  }
}

function unknown(node: string, server: string, name: string, why: string): WaymarkError {
  return new WaymarkError(
    'MCP_TOOL_UNKNOWN',
    `node "${node}" allows MCP tool "${name}" of server "${server}", which ${why}`,
    { retryable: false, details: { server, tool: name } },
  );
}

async function transportOf(node: string, t: McpTransport) {
  if (t.type === 'http')
    return { type: 'http' as const, url: t.url, ...(t.headers && { headers: { ...t.headers } }) };
  const { Experimental_StdioMCPTransport } = await loadStdio(node);
  return new Experimental_StdioMCPTransport({
    command: t.command,
    ...(t.args && { args: [...t.args] }),
    ...(t.env && { env: { ...t.env } }),
    ...(t.cwd && { cwd: t.cwd }),
    stderr: 'ignore',
  });
}

let mcp: Promise<McpModule> | undefined;
let stdio: Promise<StdioModule> | undefined;

// `@ai-sdk/mcp` is an optional peer, loaded at the first agent node with servers: waymark/model
// imports without it, and so does every agent that has none.
function load(node: string): Promise<McpModule> {
  mcp ??= import('@ai-sdk/mcp').catch((cause) => {
    mcp = undefined;
    throw missing(node, cause);
  });
  return mcp;
}

function loadStdio(node: string): Promise<StdioModule> {
  stdio ??= import('@ai-sdk/mcp/mcp-stdio').catch((cause) => {
    stdio = undefined;
    throw missing(node, cause);
  });
  return stdio;
}

function missing(node: string, cause: unknown): unknown {
  const code = (cause as { code?: unknown }).code;
  if (code !== 'ERR_MODULE_NOT_FOUND' || !String(cause).includes('@ai-sdk/mcp')) return cause;
  return new WaymarkError(
    'MCP_CLIENT_MISSING',
    `node "${node}" takes tools from MCP servers through the AI SDK's MCP client, which is not installed: npm install @ai-sdk/mcp@1`,
    { retryable: false, cause },
  );
}
