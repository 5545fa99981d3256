// The public surface of `waymark/model`: model and agent nodes over the Vercel AI SDK, and the
// scripted and record/replay models that keep tests offline. Its own entry, so `ai` and the
// provider packages load only for those who import it; `waymark` itself never does.

export type { AgentOptions, EffectToolCall, EffectToolOptions } from './agent.js';
export { agent, effectTool } from './agent.js';
export type { Cassette, CassetteEntry } from './cassette.js';
export { normalizeRequest, recordModel, replayModel, requestKey } from './cassette.js';
export type { ItemChecks, ListKeys, OutputCheck, Quarantined, Reasons } from './checks.js';
export type { McpServer, McpServers, McpTransport } from './mcp.js';
export type { NodeLimits, Price, PriceTable } from './meter.js';
export type { ModelCall, ModelNode, ModelOptions } from './model-node.js';
export { model } from './model-node.js';
export type { Env, ImportModule, ResolveOptions } from './providers.js';
export {
  defaultLocalBaseUrl,
  modelName,
  parseModelName,
  providerNames,
  resolveModel,
} from './providers.js';
export type {
  ScriptedModel,
  ScriptedModelOptions,
  ScriptedReply,
  ScriptedRequest,
  ScriptedResponse,
} from './scripted.js';
export { promptText, scriptedModel } from './scripted.js';
export type { CallOptions, GenerateResult, LanguageModelV3, ModelRef } from './spec.js';
export { toolCallEvent } from './tool-calls.js';
