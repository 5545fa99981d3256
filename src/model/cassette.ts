import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { WaymarkError } from '../error/waymark-error.js';
import { modelName, parseModelName, type ResolveOptions, resolveModel } from './providers.js';
import {
  type CallOptions,
  type GenerateResult,
  type LanguageModelV3,
  type ModelRef,
  streamOf,
} from './spec.js';

/** One recorded call: the model that answered, the request as hashed, and the answer. */
export interface CassetteEntry {
  readonly model: string;
  readonly request: unknown;
  readonly response: unknown;
}

/** A cassette file: recorded answers keyed by the sha256 of their normalized request. */
export interface Cassette {
  readonly version: 1;
  readonly entries: Record<string, CassetteEntry>;
}

// What decides the answer: the prompt, tools and settings. The abort signal, headers and raw
// chunk flag do not, so they are not part of the key.
const keyFields = [
  'prompt',
  'tools',
  'toolChoice',
  'responseFormat',
  'maxOutputTokens',
  'temperature',
  'topP',
  'topK',
  'stopSequences',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'providerOptions',
] as const;

/**
 * The request as recorded: the fields that decide the answer, as plain JSON with sorted keys.
 *
 * @example
 * normalizeRequest({ prompt, temperature: 0, abortSignal }) // { prompt: [...], temperature: 0 }
 */
export function normalizeRequest(call: CallOptions): unknown {
  const picked: Record<string, unknown> = {};
  for (const field of keyFields) if (call[field] !== undefined) picked[field] = call[field];
  return plain(picked);
}

/**
 * The cassette key of a request: sha256 (hex) of its normalized JSON.
 *
 * @example
 * requestKey(call) // '9f2c…' (64 hex digits)
 */
export function requestKey(call: CallOptions): string {
  return createHash('sha256')
    .update(JSON.stringify(normalizeRequest(call)))
    .digest('hex');
}

function plain(value: unknown): unknown {
  if (value instanceof Uint8Array) return { base64: Buffer.from(value).toString('base64') };
  if (value instanceof URL) return value.href;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = plain(v);
    }
    return out;
  }
  return value;
}

/**
 * Wraps a real model so every call is also written to a cassette file (JSON), which
 * {@link replayModel} answers from later without a network. Each call goes to the real model;
 * an entry with the same key is replaced.
 *
 * @example
 * const m = recordModel('openai:gpt-4o-mini', 'test/cassettes/summary.json');
 */
export function recordModel(
  real: ModelRef,
  file: string,
  options: ResolveOptions = {},
): LanguageModelV3 {
  const name = modelName(real);
  const { provider, modelId } = typeof real === 'string' ? parseModelName(real) : splitName(name);
  let resolved: Promise<LanguageModelV3> | undefined;

  const doGenerate = async (call: CallOptions): Promise<GenerateResult> => {
    resolved ??=
      typeof real === 'string'
        ? resolveModel(real, options)
        : Promise.resolve(real as LanguageModelV3);
    const result = await (await resolved).doGenerate(call);
    const entry: CassetteEntry = {
      model: name,
      request: normalizeRequest(call),
      response: recordable(result),
    };
    await record(file, requestKey(call), entry);
    return result;
  };
  return {
    specificationVersion: 'v3',
    provider,
    modelId,
    supportedUrls: {},
    doGenerate,
    doStream: async (call) => streamOf(await doGenerate(call)),
  };
}

/**
 * A model that answers only from a cassette written by {@link recordModel}: the same request
 * gets the recorded answer; an unknown one fails with `CASSETTE_MISS`. It never calls the
 * network. Its name is the recorded model's, so usage and the trace read as they did.
 *
 * @example
 * const m = replayModel('test/cassettes/summary.json');
 */
export function replayModel(file: string): LanguageModelV3 {
  let cassette: Cassette | undefined;
  const load = () => {
    cassette ??= readCassette(file, false);
    return cassette;
  };
  const recordedName = () => {
    try {
      return Object.values(load().entries)[0]?.model ?? 'replay:cassette';
    } catch {
      return 'replay:cassette';
    }
  };
  const doGenerate = async (call: CallOptions): Promise<GenerateResult> => {
    const key = requestKey(call);
    const entry = load().entries[key];
    if (!entry) {
      throw new WaymarkError(
        'CASSETTE_MISS',
        `cassette ${file} has no answer for this request (key ${key.slice(0, 12)}); record it again with recordModel`,
        { retryable: false, details: { file, key } },
      );
    }
    return revive(entry.response);
  };
  return {
    specificationVersion: 'v3',
    get provider() {
      return splitName(recordedName()).provider;
    },
    get modelId() {
      return splitName(recordedName()).modelId;
    },
    supportedUrls: {},
    doGenerate,
    doStream: async (call) => streamOf(await doGenerate(call)),
  };
}

// One write queue per cassette file, shared by every recordModel of the process: each write
// reads the file afresh and adds its entry, so nodes recording side by side (fan-out branches,
// several recordModel values on one file) never drop each other's entries.
const queues = new Map<string, Promise<void>>();

function record(file: string, key: string, entry: CassetteEntry): Promise<void> {
  const path = resolve(file);
  const write = (queues.get(path) ?? Promise.resolve()).then(async () => {
    const cassette = readCassette(path, true);
    cassette.entries[key] = entry;
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, `${JSON.stringify(cassette, null, 2)}\n`);
  });
  // A failed write fails its own call only, not the calls queued after it.
  queues.set(
    path,
    write.catch(() => {}),
  );
  return write;
}

function splitName(name: string): { provider: string; modelId: string } {
  const at = name.indexOf(':');
  return at > 0
    ? { provider: name.slice(0, at), modelId: name.slice(at + 1) }
    : { provider: 'replay', modelId: name };
}

function readCassette(file: string, missingIsEmpty: boolean): Cassette {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (cause) {
    if (missingIsEmpty && (cause as NodeJS.ErrnoException).code === 'ENOENT')
      return { version: 1, entries: {} };
    throw invalid(file, 'cannot be read', cause);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (cause) {
    throw invalid(file, 'is not JSON', cause);
  }
  const c = data as Partial<Cassette> | null;
  if (c?.version !== 1 || typeof c.entries !== 'object' || c.entries === null)
    throw invalid(file, 'is not a cassette (version 1 with entries)');
  return c as Cassette;
}

const invalid = (file: string, why: string, cause?: unknown) =>
  new WaymarkError('CASSETTE_INVALID', `cassette ${file} ${why}`, {
    retryable: false,
    cause,
    details: { file },
  });

// Request and response bodies and headers are left out: they can hold keys and are not needed
// to answer again.
function recordable(result: GenerateResult): unknown {
  const { content, finishReason, usage, warnings, providerMetadata, response } = result;
  return plain({
    content,
    finishReason,
    usage,
    warnings,
    providerMetadata,
    response: response && {
      id: response.id,
      modelId: response.modelId,
      timestamp: response.timestamp,
    },
  });
}

function revive(recorded: unknown): GenerateResult {
  const r = structuredClone(recorded) as GenerateResult & { response?: { timestamp?: unknown } };
  if (typeof r.response?.timestamp === 'string')
    r.response.timestamp = new Date(r.response.timestamp);
  return r;
}
