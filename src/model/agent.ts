import type { FlexibleSchema, Tool, ToolExecutionOptions, ToolSet } from 'ai';
import { WaymarkError } from '../error/waymark-error.js';
import { markKind, markSpend } from '../graph/kinds.js';
import type { NodeContext } from '../graph/types.js';
import { connectMcp, type McpServers } from './mcp.js';
import {
  declared,
  type ModelNode,
  type ModelOptions,
  runModelNode,
  spendLimits,
  withRate,
} from './model-node.js';
import { ToolCalls } from './tool-calls.js';

/**
 * Options of {@link agent}: those of `model()`, plus the tools and the turn limit. The loop ends
 * when the model replies with output matching the schema instead of calling a tool.
 */
export interface AgentOptions<S, O> extends ModelOptions<S, O> {
  /** AI SDK tools (`tool({...})`), or a function of the state giving them; see {@link effectTool}. */
  readonly tools?: ToolSet | ((state: Readonly<S>) => ToolSet);
  /**
   * MCP servers to take tools from, by name, each with the tools the model may call and those
   * that act on the outside world (docs/models.md#mcp-tools). Connected for each attempt.
   */
  readonly mcp?: McpServers;
  /** Most model calls in one attempt; reaching it without an answer is `BUDGET_EXCEEDED`. */
  readonly maxTurns: number;
  /**
   * Most tool calls in one attempt, every tool counted; a call past it is not made and the node
   * stops with `BUDGET_EXCEEDED` (`node.maxToolCalls`) at the end of that turn.
   */
  readonly maxToolCalls?: number;
}

/**
 * The bounded agent loop inside one node: the model calls tools and sees their results, turn by
 * turn, until it answers with output matching the schema. Each turn is recorded under the
 * attempt's trace entry; `maxTurns`, `maxTokens`, `maxCostUsd` and the run's budget stop it with
 * a `budget` error, never a hang or a partial answer. The graph governs; the node explores.
 *
 * @example
 * .node('investigate', agent({
 *   model: 'anthropic:claude-sonnet-4-5',
 *   prompt: (s) => `Find where ${s.symbol} is defined.`,
 *   tools: { grep: tool({ inputSchema: z.object({ pattern: z.string() }), execute: grep }) },
 *   output: z.object({ file: z.string(), line: z.number() }),
 *   maxTurns: 8,
 *   maxTokens: 50_000,
 * }), { kind: 'model' })
 */
export function agent<S = Record<string, unknown>, O = Record<string, unknown>>(
  options: AgentOptions<S, O>,
): ModelNode<S> {
  const maxAttempts = declared(options);
  if (!Number.isInteger(options.maxTurns) || options.maxTurns < 1) {
    throw new WaymarkError(
      'DECLARATION_INVALID',
      'agent node: maxTurns must be a whole number >= 1',
      {
        retryable: false,
      },
    );
  }
  const { maxToolCalls } = options;
  if (maxToolCalls !== undefined && !(Number.isInteger(maxToolCalls) && maxToolCalls >= 0)) {
    throw new WaymarkError(
      'DECLARATION_INVALID',
      'agent node: maxToolCalls must be a whole number >= 0',
      { retryable: false },
    );
  }
  const node: ModelNode<S> = async (state, ctx) => {
    const given = typeof options.tools === 'function' ? options.tools(state) : options.tools;
    const tools = withEffects(given ?? {}, ctx);
    const loop = { maxAttempts, maxTurns: options.maxTurns };
    if (options.mcp === undefined && maxToolCalls === undefined)
      return runModelNode(options, state, ctx, { ...loop, tools });
    const mcp = options.mcp && (await connectMcp(ctx.node, options.mcp, ctx.signal));
    try {
      return await runModelNode(options, state, ctx, {
        ...loop,
        maxToolCalls,
        tools: (meter) => {
          const calls = new ToolCalls(ctx, mcp, meter);
          return { tools: calls.wrap(tools), turnTools: (made) => calls.forTurn(made) };
        },
      });
    } finally {
      // After the loop, never before: a client closed while a tool runs fails that call.
      await mcp?.close();
    }
  };
  // Every call is a turn, schema retries included: maxTurns bounds an attempt's calls.
  return withRate(
    markSpend(markKind(node, 'model'), spendLimits(options, options.maxTurns)),
    options,
  );
}

const effectMarker = Symbol.for('waymark.effectTool');

/** What an effect tool's `execute` gets besides its input. */
export interface EffectToolCall {
  /** The effect's idempotency key: pass it to the receiver so it can dedupe a repeated call. */
  readonly key: string;
  readonly signal: AbortSignal | undefined;
  readonly toolCallId: string;
}

/** Options of {@link effectTool}. */
export interface EffectToolOptions<I, R> {
  readonly description?: string;
  readonly inputSchema: FlexibleSchema<I>;
  readonly execute: (input: I, call: EffectToolCall) => R | Promise<R>;
}

type EffectExecute = (input: unknown, call: EffectToolCall) => unknown;

/**
 * A tool that acts on the outside world. Inside an `agent()` its calls run through `ctx.effect`
 * under the stable name `<tool>#<n>` (the nth call of that tool in the attempt), so a retried or
 * resumed attempt gets the recorded result instead of acting again. Its result must be JSON.
 *
 * @example
 * tools: {
 *   comment: effectTool({
 *     inputSchema: z.object({ body: z.string() }),
 *     execute: ({ body }, { key }) => github.comment(body, { idempotencyKey: key }),
 *   }),
 * }
 */
export function effectTool<I, R>(options: EffectToolOptions<I, R>): Tool<I, R> {
  const tool = {
    ...(options.description !== undefined && { description: options.description }),
    inputSchema: options.inputSchema,
    execute: () => {
      throw new Error('waymark: an effectTool runs only inside an agent() node');
    },
    [effectMarker]: options.execute as EffectExecute,
  };
  return tool as unknown as Tool<I, R>;
}

/** The tools with every effect tool's execute routed through `ctx.effect`, numbered per tool. */
function withEffects(tools: ToolSet, ctx: NodeContext): ToolSet {
  const calls = new Map<string, number>();
  const out: ToolSet = {};
  for (const [name, tool] of Object.entries(tools)) {
    const execute = (tool as { [effectMarker]?: EffectExecute })[effectMarker];
    if (!execute) {
      out[name] = tool;
      continue;
    }
    out[name] = {
      ...tool,
      execute: (input: unknown, options: ToolExecutionOptions) => {
        // Numbered as the model calls it: a rerun that calls this tool in the same order gets
        // each recorded result back under the same name.
        const n = (calls.get(name) ?? 0) + 1;
        calls.set(name, n);
        return ctx.effect(`${name}#${n}`, (key) =>
          execute(input, { key, signal: options.abortSignal, toolCallId: options.toolCallId }),
        );
      },
    } as Tool;
  }
  return out;
}
