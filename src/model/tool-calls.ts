import type { Tool, ToolExecutionOptions, ToolSet } from 'ai';
import { isWaymarkError, WaymarkError } from '../error/waymark-error.js';
import type { NodeContext, ToolCallRecord } from '../graph/types.js';
import type { McpConnection, McpTool } from './mcp.js';
import type { Meter } from './meter.js';

/** The name of the recorded `ctx.emit` event each MCP tool call tells the run's watchers. */
export const toolCallEvent = 'mcp.tool-call';

// What the trace and the stream keep of an argument or a result: enough to read, not megabytes.
const keptChars = 4096;

/**
 * The MCP tools of one agent attempt, under the node's capabilities, and the record of every call
 * made to them: each call is counted against the node's `maxToolCalls` (a call past it is not
 * made, and the loop stops with `BUDGET_EXCEEDED`), an effect tool's call runs through
 * `ctx.effect`, and each call's input, result (or error) and duration go into the turn's trace
 * entry and, as a recorded `mcp.tool-call` event, into the run's stream.
 *
 * @example
 * const calls = new ToolCalls(ctx, mcp, meter);
 * const tools = calls.wrap(localTools);
 */
export class ToolCalls {
  readonly #ctx: NodeContext;
  readonly #mcp: McpConnection | undefined;
  readonly #meter: Meter;
  readonly #records = new Map<string, ToolCallRecord>();
  readonly #ordinals = new Map<string, number>();

  constructor(ctx: NodeContext, mcp: McpConnection | undefined, meter: Meter) {
    this.#ctx = ctx;
    this.#mcp = mcp;
    this.#meter = meter;
  }

  /** `local` with the MCP tools added, every tool counted against the node's call budget. */
  wrap(local: ToolSet): ToolSet {
    const out: ToolSet = {};
    for (const [name, tool] of Object.entries(local)) out[name] = this.#counted(tool);
    for (const t of this.#mcp?.tools ?? []) {
      if (Object.hasOwn(out, t.name)) {
        throw new WaymarkError(
          'MCP_TOOL_UNKNOWN',
          `node "${this.#ctx.node}" has a tool "${t.name}" of its own and from MCP server "${t.server}"`,
          { retryable: false, details: { server: t.server, tool: t.name } },
        );
      }
      out[t.name] = this.#mcpTool(t);
    }
    return out;
  }

  /**
   * The records of one turn's calls, in the order the model made them: those that ran, and the
   * calls of tools a server has but the node does not allow, which never reached the server.
   */
  forTurn(
    calls: readonly {
      readonly toolCallId: string;
      readonly toolName: string;
      readonly input: unknown;
    }[],
  ): ToolCallRecord[] {
    const out: ToolCallRecord[] = [];
    for (const call of calls) {
      const ran = this.#records.get(call.toolCallId);
      if (ran !== undefined) {
        out.push(ran);
        continue;
      }
      const server = this.#mcp?.denied.get(call.toolName);
      if (server === undefined) continue;
      const record: ToolCallRecord = {
        tool: `${server}.${call.toolName}`,
        input: kept(call.input),
        error: {
          code: 'MCP_TOOL_DENIED',
          message: `node "${this.#ctx.node}" does not allow MCP tool "${call.toolName}" of server "${server}"; it was not called`,
        },
        durationMs: 0,
      };
      this.#ctx.emit(toolCallEvent, record);
      out.push(record);
    }
    return out;
  }

  // A call past the budget is not made: the model is told, and the loop stops after this turn.
  #book(name: string): void {
    if (this.#meter.bookToolCall()) return;
    throw new WaymarkError(
      'BUDGET_EXCEEDED',
      `node "${this.#ctx.node}" used its budget of tool calls; "${name}" was not called`,
      { errorClass: 'budget', retryable: false },
    );
  }

  #counted(tool: ToolSet[string]): ToolSet[string] {
    const execute = tool.execute;
    if (execute === undefined || this.#meter.maxToolCalls === undefined) return tool;
    return {
      ...tool,
      execute: (input: unknown, options: ToolExecutionOptions) => {
        this.#book(options.toolCallId);
        return execute(input, options);
      },
    } as ToolSet[string];
  }

  #mcpTool(t: McpTool): ToolSet[string] {
    const run = t.tool.execute!;
    const label = `${t.server}.${t.name}`;
    return {
      ...t.tool,
      execute: async (input: unknown, options: ToolExecutionOptions) => {
        const started = performance.now();
        let effect: string | undefined;
        const done = (record: Omit<ToolCallRecord, 'tool' | 'input' | 'durationMs'>) => {
          const full: ToolCallRecord = {
            tool: label,
            input: kept(input),
            ...record,
            durationMs: Math.round(performance.now() - started),
            ...(effect !== undefined && { effect }),
          };
          this.#records.set(options.toolCallId, full);
          this.#ctx.emit(toolCallEvent, full);
        };
        try {
          this.#book(t.name);
          const call = (key?: string) => {
            const args =
              key !== undefined && t.takesKey
                ? { ...(input as object), idempotencyKey: key }
                : input;
            const signal = AbortSignal.any([
              ...(options.abortSignal ? [options.abortSignal] : []),
              AbortSignal.timeout(t.timeoutMs),
            ]);
            return run(args, { ...options, abortSignal: signal });
          };
          let output: unknown;
          if (t.effect) {
            // Numbered per tool as the model calls it, like effectTool: a resumed attempt that
            // calls it in the same order gets each recorded result, and the server is not asked.
            const n = (this.#ordinals.get(label) ?? 0) + 1;
            this.#ordinals.set(label, n);
            const name = `mcp:${label}#${n}`;
            effect = `${this.#ctx.runId}/${this.#ctx.activationId}/${name}`;
            output = await this.#ctx.effect(name, (key) => call(key) as Promise<unknown>);
          } else {
            output = await call();
          }
          done({ output: kept(output) });
          return output;
        } catch (error) {
          const code = isWaymarkError(error) ? error.code : 'MCP_SERVER_FAILED';
          done({ error: { code, message: (error as Error).message } });
          throw error;
        }
      },
    } as Tool as ToolSet[string];
  }
}

function kept(value: unknown): unknown {
  const text = JSON.stringify(value ?? null);
  if (text.length <= keptChars) return value ?? null;
  return { truncated: true, json: `${text.slice(0, keptChars)}…` };
}
