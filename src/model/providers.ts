import { WaymarkError } from '../error/waymark-error.js';
import type { LanguageModelV3, ModelRef } from './spec.js';

/** Where model names and credentials come from; `process.env` unless a test passes its own. */
export type Env = Readonly<Record<string, string | undefined>>;

/** Loads a provider package; a test passes one that fails to see the missing-package error. */
export type ImportModule = (specifier: string) => Promise<unknown>;

/**
 * The default base URL of `openai-compatible:` models: Ollama's OpenAI-compatible endpoint.
 * `WAYMARK_OPENAI_BASE_URL` overrides it.
 *
 * @example
 * WAYMARK_OPENAI_BASE_URL=http://127.0.0.1:8080/v1 waymark run graph.ts --model local:qwen3
 */
export const defaultLocalBaseUrl = 'http://127.0.0.1:11434/v1';

interface ProviderEntry {
  readonly pkg: string;
  /** The variable holding the API key; absent for providers that need none. */
  readonly keyVariable?: string;
  readonly create: (mod: unknown, env: Env) => (modelId: string) => LanguageModelV3;
}

type Factory = (settings: Record<string, unknown>) => (modelId: string) => LanguageModelV3;
const factory = (mod: unknown, name: string): Factory => (mod as Record<string, Factory>)[name]!;

// `undefined` settings are left out: the provider then applies its own default.
const settings = (entries: Record<string, string | boolean | undefined>) =>
  Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined && v !== ''));

const local: ProviderEntry = {
  pkg: '@ai-sdk/openai-compatible',
  create: (mod, env) =>
    factory(
      mod,
      'createOpenAICompatible',
    )(
      settings({
        name: 'openai-compatible',
        baseURL: env.WAYMARK_OPENAI_BASE_URL || defaultLocalBaseUrl,
        apiKey: env.WAYMARK_OPENAI_API_KEY,
        // Ollama, llama.cpp and vLLM accept response_format json_schema; without it the schema
        // would only be a hint in the prompt.
        supportsStructuredOutputs: true,
        includeUsage: true,
      }),
    ),
};

const providers: Readonly<Record<string, ProviderEntry>> = {
  openai: {
    pkg: '@ai-sdk/openai',
    keyVariable: 'OPENAI_API_KEY',
    create: (mod, env) =>
      factory(
        mod,
        'createOpenAI',
      )(settings({ apiKey: env.OPENAI_API_KEY, baseURL: env.OPENAI_BASE_URL })),
  },
  anthropic: {
    pkg: '@ai-sdk/anthropic',
    keyVariable: 'ANTHROPIC_API_KEY',
    create: (mod, env) =>
      factory(
        mod,
        'createAnthropic',
      )(settings({ apiKey: env.ANTHROPIC_API_KEY, baseURL: env.ANTHROPIC_BASE_URL })),
  },
  'openai-compatible': local,
  local,
};

/**
 * The providers a model name may start with.
 *
 * @example
 * providerNames // ['openai', 'anthropic', 'openai-compatible', 'local']
 */
export const providerNames = Object.keys(providers) as readonly string[];

/**
 * Splits `provider:model-id` at its first colon (model ids may hold more: `local:llama3.2:3b`).
 *
 * @example
 * parseModelName('local:llama3.2:3b') // { provider: 'local', modelId: 'llama3.2:3b' }
 * @throws WaymarkError `MODEL_NAME_INVALID`
 */
export function parseModelName(name: string): { provider: string; modelId: string } {
  const at = typeof name === 'string' ? name.indexOf(':') : -1;
  const provider = at > 0 ? name.slice(0, at) : '';
  const modelId = at > 0 ? name.slice(at + 1) : '';
  if (!modelId || !(provider in providers)) {
    throw new WaymarkError(
      'MODEL_NAME_INVALID',
      `model "${String(name)}" is not provider:model-id with a provider among ${providerNames.join(', ')}`,
      { retryable: false, details: { model: name, providers: providerNames } },
    );
  }
  return { provider, modelId };
}

/**
 * The `provider:model-id` of a model: the name itself, or the provider (up to its first dot,
 * `openai.chat` -> `openai`) and model id of a model object.
 *
 * @example
 * modelName(scriptedModel([])) // 'scripted:model'
 */
export function modelName(model: ModelRef): string {
  if (typeof model === 'string') return model;
  return `${model.provider.split('.')[0]}:${model.modelId}`;
}

/** Options of {@link resolveModel}. */
export interface ResolveOptions {
  readonly env?: Env;
  readonly importModule?: ImportModule;
}

/**
 * Turns `provider:model-id` into an AI SDK model, loading the provider package and reading its
 * key from the environment only now, so a graph file loads without either.
 *
 * @example
 * const model = await resolveModel('openai:gpt-4o-mini'); // needs @ai-sdk/openai and OPENAI_API_KEY
 * @throws WaymarkError `MODEL_NAME_INVALID`, `MODEL_PROVIDER_MISSING`, `MODEL_KEY_MISSING`
 */
export async function resolveModel(
  name: string,
  options: ResolveOptions = {},
): Promise<LanguageModelV3> {
  const { provider, modelId } = parseModelName(name);
  const entry = providers[provider]!;
  const env = options.env ?? process.env;
  if (entry.keyVariable && !env[entry.keyVariable]) {
    throw new WaymarkError(
      'MODEL_KEY_MISSING',
      `model "${name}" needs an API key in the environment variable ${entry.keyVariable}`,
      { retryable: false, details: { model: name, variable: entry.keyVariable } },
    );
  }
  let mod: unknown;
  try {
    mod = await (options.importModule ?? ((s: string) => import(s)))(entry.pkg);
  } catch (cause) {
    throw new WaymarkError(
      'MODEL_PROVIDER_MISSING',
      `model "${name}" needs the package ${entry.pkg}: npm install ${entry.pkg}`,
      { retryable: false, cause, details: { model: name, package: entry.pkg } },
    );
  }
  return entry.create(mod, env)(modelId);
}
