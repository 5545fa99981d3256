import type { ErrorClass } from '../error/codes.js';
import type { Report } from './diagnostic.js';
import { kindTraits } from './kinds.js';
import { maxTimerMs } from './limits.js';
import type { NodeDef } from './types.js';

// A record, not a list, so adding an ErrorClass without listing it here fails to type-check.
const errorClasses: Readonly<Record<ErrorClass, true>> = {
  transient: true,
  permanent: true,
  timeout: true,
  cap: true,
  budget: true,
  check: true,
};

/** Checks one node's options; values out of range are OPTION_INVALID, naming option and rule. */
export function checkNodeOptions(node: NodeDef, report: Report): void {
  const bad = (option: string, value: unknown, rule: string) =>
    report('OPTION_INVALID', `node "${node.name}" has ${option} = ${show(value)}; ${rule}`, {
      node: node.name,
    });
  // Own keys only: "toString" is `in` every object literal, and would compile with no traits.
  if (typeof node.kind !== 'string' || !Object.hasOwn(kindTraits, node.kind))
    bad('kind', node.kind, `it must be one of ${Object.keys(kindTraits).join(', ')}`);
  if (node.visits !== undefined && !isPositiveInt(node.visits))
    bad('visits', node.visits, 'it must be a whole number >= 1');
  if (node.timeoutMs !== undefined && !(node.timeoutMs > 0 && node.timeoutMs <= maxTimerMs))
    bad('timeoutMs', node.timeoutMs, `it must be > 0 and at most ${maxTimerMs}`);
  const idle = node.idleTimeoutMs;
  if (idle !== undefined && !(idle > 0 && idle <= maxTimerMs))
    bad('idleTimeoutMs', idle, `it must be > 0 and at most ${maxTimerMs}`);
  if (!isPositiveInt(node.version)) bad('version', node.version, 'it must be a whole number >= 1');
  for (const key of ['reads', 'writes'] as const) {
    if (node[key] !== undefined && !Array.isArray(node[key]))
      bad(key, node[key], 'it must be a list of state field names');
  }
  if (
    node.exec !== undefined &&
    !(Array.isArray(node.exec) && node.exec.every((e) => typeof e === 'string' && e !== ''))
  )
    bad('exec', node.exec, "it must be a list of program names or paths, such as ['node', 'git']");
  const parentGoto = node.parentGoto;
  if (
    parentGoto !== undefined &&
    !(Array.isArray(parentGoto) && parentGoto.every((t) => typeof t === 'string' && t !== ''))
  )
    bad(
      'parentGoto',
      parentGoto,
      "it must be a list of the parent's node names, such as ['publish']",
    );
  if (node.workspace !== undefined) checkWorkspace(node, bad);
  if (node.cache !== undefined) checkCache(node, bad);
  if (node.rateLimit !== undefined) checkRateLimit(node, bad);
  if (node.notBefore !== undefined && node.notBefore !== true)
    bad('notBefore', node.notBefore, 'it must be a function of the state returning a Date');
  else if (
    node.notBefore === true &&
    (node.kind === 'person' || node.kind === 'sleep' || node.kind === 'event')
  )
    bad('notBefore', 'a function', `a ${node.kind} node has no body to start later`);
  for (const key of ['calls', 'maxTokens', 'maxOutputTokens', 'maxCostUsd'] as const) {
    const v = node.spend?.[key];
    if (v !== undefined && !(typeof v === 'number' && v > 0 && v < Infinity))
      bad(`spend.${key}`, v, 'it must be a number > 0');
  }
  const retry = node.retry;
  if (retry === undefined) return;
  if (typeof retry !== 'object' || retry === null) {
    bad('retry', retry, 'it must be an object such as { attempts: 3 }');
    return;
  }
  if (!isPositiveInt(retry.attempts))
    bad('retry.attempts', retry.attempts, 'it must be a whole number >= 1');
  if (retry.backoffMs !== undefined && !(retry.backoffMs >= 0 && retry.backoffMs <= maxTimerMs))
    bad('retry.backoffMs', retry.backoffMs, `it must be >= 0 and at most ${maxTimerMs}`);
  if (retry.factor !== undefined && !(retry.factor >= 1))
    bad('retry.factor', retry.factor, 'it must be >= 1');
  if (retry.maxBackoffMs !== undefined && !(retry.maxBackoffMs >= 0))
    bad('retry.maxBackoffMs', retry.maxBackoffMs, 'it must be >= 0');
  if (retry.when !== undefined && retry.when !== true)
    bad('retry.when', retry.when, 'it must be a function (error) => boolean');
  if (retry.retryOn !== undefined) {
    const known = (c: unknown) => typeof c === 'string' && Object.hasOwn(errorClasses, c);
    if (!Array.isArray(retry.retryOn) || !retry.retryOn.every(known))
      bad(
        'retry.retryOn',
        retry.retryOn,
        `it must list error classes among ${Object.keys(errorClasses).join(', ')}`,
      );
  }
}

function checkCache(
  node: NodeDef,
  bad: (option: string, value: unknown, rule: string) => void,
): void {
  const cache = node.cache as { ttlMs?: unknown; key?: unknown } | null;
  if (typeof cache !== 'object' || cache === null) {
    bad('cache', cache, 'it must be an object such as { ttlMs: 3_600_000 }');
    return;
  }
  const ttl = cache.ttlMs;
  if (!(typeof ttl === 'number' && ttl > 0 && ttl < Infinity))
    bad('cache.ttlMs', ttl, 'it must be a number of milliseconds > 0');
  if (cache.key !== undefined && cache.key !== true)
    bad('cache.key', cache.key, 'it must be a function (state) => string');
  // An effect's output is what it did: taking it from another run would skip the action.
  if (node.kind !== 'code' && node.kind !== 'model')
    bad('cache', cache, `a ${node.kind} node cannot be cached; only code and model nodes can`);
  else if (cache.key === undefined && node.reads === undefined)
    bad(
      'cache',
      cache,
      'its key is the input hash, which needs `reads`: declare the fields the node reads, or give key: (state) => string',
    );
}

function checkWorkspace(
  node: NodeDef,
  bad: (option: string, value: unknown, rule: string) => void,
): void {
  const w = node.workspace;
  if (typeof w !== 'object' || w === null) {
    bad('workspace', w, "it must be an object such as { repo: '.', patch: 'code' }");
    return;
  }
  const text = (v: unknown) => typeof v === 'string' && v.trim() !== '';
  if (!text(w.repo)) bad('workspace.repo', w.repo, 'it must be the path of a repository');
  if (w.base !== undefined && !text(w.base))
    bad('workspace.base', w.base, "it must be a revision such as 'HEAD' or 'main'");
  if (!text(w.patch))
    bad('workspace.patch', w.patch, 'it must name the state field that holds the patch');
  if (
    w.keepFailedMs !== undefined &&
    !(w.keepFailedMs >= 0 && w.keepFailedMs <= Number.MAX_SAFE_INTEGER)
  )
    bad('workspace.keepFailedMs', w.keepFailedMs, 'it must be a number of milliseconds >= 0');
}

// Numbers as written (JSON would print Infinity and NaN as null), anything else as JSON.
export function show(value: unknown): string {
  return typeof value === 'number' ? String(value) : (JSON.stringify(value) ?? String(value));
}

export function isPositiveInt(value: unknown): boolean {
  return Number.isInteger(value) && (value as number) > 0;
}

/** A rate limit names a resource and at least one quota, on a node whose attempts it admits. */
function checkRateLimit(
  node: NodeDef,
  bad: (option: string, value: unknown, rule: string) => void,
): void {
  const rate = node.rateLimit as unknown as Record<string, unknown>;
  if (typeof rate !== 'object' || rate === null) {
    bad(
      'rateLimit',
      rate,
      "it must be an object such as { resource: 'openai', requestsPerMinute: 500 }",
    );
    return;
  }
  const { resource, requestsPerMinute: rpm, tokensPerMinute: tpm } = rate;
  if (typeof resource !== 'string' || resource.length === 0 || resource.length > 200)
    bad('rateLimit.resource', resource, 'it must be a name of 1 to 200 characters');
  for (const [key, v] of [
    ['requestsPerMinute', rpm],
    ['tokensPerMinute', tpm],
  ] as const) {
    if (v !== undefined && !isPositiveInt(v))
      bad(`rateLimit.${key}`, v, 'it must be a whole number >= 1');
  }
  if (rpm === undefined && tpm === undefined)
    bad('rateLimit', rate, 'it needs requestsPerMinute, tokensPerMinute or both');
  if (Object.hasOwn(kindTraits, node.kind) && !kindTraits[node.kind].retryable)
    bad('rateLimit', rate, `a ${node.kind} node runs no attempts to admit`);
  const reserved = node.spend?.maxTokens;
  if (typeof tpm === 'number' && reserved !== undefined && reserved > tpm)
    bad(
      'rateLimit.tokensPerMinute',
      tpm,
      `it is below the node's maxTokens (${reserved}), which each attempt reserves: no attempt could be admitted`,
    );
}
