import { WaymarkError } from '../../error/waymark-error.js';
import type {
  Memory,
  MemoryItem,
  MemoryNamespaceOptions,
  MemoryPutOptions,
  MemorySearchOptions,
} from '../../graph/memory.js';
import type { ItemRecord, ItemSearch, ItemStore, NewItem } from '../../store/store.js';

/** How many items a search returns when it does not say: LangGraph's default. */
export const defaultSearchLimit = 10;

/**
 * The memory kept across runs in a store, typed: values go in and come out as JSON (LangGraph's
 * `BaseStore`: `put`, `get`, `search`, `delete`). Writes made here are not recorded in any
 * run's history; a node body writes through `ctx.memory`, which is.
 *
 * @throws WaymarkError `MEMORY_INVALID` (rejected promise) for a namespace, key, value or option
 *   no store can keep: a value JSON cannot hold as it is (a function, `undefined`, NaN, a cycle,
 *   a class instance such as a Date), a ttlMs that is not > 0.
 * @example
 * const memory = memoryOf(store);
 * await memory.put(['users', 'u1'], 'prefs', { theme: 'dark' }, { ttlMs: 86_400_000 });
 * const dark = await memory.search(['users'], { filter: { theme: 'dark' }, limit: 20 });
 */
export function memoryOf(store: ItemStore): Memory {
  return {
    put: async <V>(
      namespace: readonly string[],
      key: string,
      value: V,
      options?: MemoryPutOptions,
    ): Promise<MemoryItem<V>> =>
      readItem<V>(await store.putItem(newItem(namespace, key, value, options))),
    get: async <V>(namespace: readonly string[], key: string) => {
      const item = await store.getItem(namespace, key);
      return item === undefined ? undefined : readItem<V>(item);
    },
    search: async <V>(prefix: readonly string[], options?: MemorySearchOptions) =>
      (await store.searchItems(searchOf(prefix, options))).map((item) => readItem<V>(item)),
    delete: (namespace, key) => store.deleteItem(namespace, key),
    listNamespaces: (options) => namespacesOf(store, options),
  };
}

/** How many namespaces a listing returns when it does not say: LangGraph's default. */
export const defaultNamespaceLimit = 100;

/**
 * LangGraph's `listNamespaces`: the store lists the namespaces under the literal part of the
 * prefix (up to its first `'*'`); the wildcards, the suffix, the depth and the page are applied
 * here, on that list.
 */
async function namespacesOf(
  store: ItemStore,
  options: MemoryNamespaceOptions = {},
): Promise<string[][]> {
  const { prefix = [], suffix = [], maxDepth, limit = defaultNamespaceLimit, offset = 0 } = options;
  for (const [name, n] of [
    ['maxDepth', maxDepth],
    ['limit', limit],
    ['offset', offset],
  ] as const) {
    if (n !== undefined && !(Number.isSafeInteger(n) && n >= (name === 'maxDepth' ? 1 : 0)))
      throw new WaymarkError(
        'MEMORY_INVALID',
        `a namespace listing's ${name} must be a whole number`,
        {
          retryable: false,
          details: { [name]: n },
        },
      );
  }
  const star = prefix.indexOf('*');
  const literal = star === -1 ? prefix : prefix.slice(0, star);
  const matches = (parts: readonly string[], ns: readonly string[]) =>
    parts.every((part, i) => part === '*' || ns[i] === part);
  const listed: string[][] = [];
  const seen = new Set<string>();
  for (const ns of await store.listItemNamespaces(literal)) {
    if (ns.length < prefix.length || !matches(prefix, ns)) continue;
    if (ns.length < suffix.length || !matches(suffix, ns.slice(ns.length - suffix.length)))
      continue;
    const cut = maxDepth === undefined ? ns : ns.slice(0, maxDepth);
    // Cut namespaces of a sorted list stay sorted; each is listed once.
    const id = JSON.stringify(cut);
    if (seen.has(id)) continue;
    seen.add(id);
    listed.push(cut);
  }
  return listed.slice(offset, offset + limit);
}

/** The item a put writes, its value checked and encoded. */
export function newItem(
  namespace: readonly string[],
  key: string,
  value: unknown,
  options: MemoryPutOptions | undefined,
): NewItem {
  checkJson(value, 'value');
  return {
    namespace: [...namespace],
    key,
    value: JSON.stringify(value),
    ...(options?.ttlMs !== undefined && { ttlMs: options.ttlMs }),
  };
}

/** The store's search for a prefix and a search's options (LangGraph's default limit). */
export function searchOf(prefix: readonly string[], options?: MemorySearchOptions): ItemSearch {
  return {
    prefix: [...prefix],
    limit: options?.limit ?? defaultSearchLimit,
    offset: options?.offset ?? 0,
    ...(options?.filter !== undefined && { filter: options.filter }),
  };
}

/** A stored item, its value read back. */
export function readItem<V>(item: ItemRecord): MemoryItem<V> {
  return { ...item, namespace: [...item.namespace], value: JSON.parse(item.value) as V };
}

/**
 * Refuses a value that JSON would not give back as it is: what `get` returns must be what was
 * put. Plain objects and arrays of strings, finite numbers, booleans and null only.
 */
function checkJson(value: unknown, path: string, seen = new Set<object>()): void {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (Number.isFinite(value)) return;
    throw notJson(path, `${value}`);
  }
  if (typeof value !== 'object') throw notJson(path, typeof value);
  if (seen.has(value)) throw notJson(path, 'a cycle');
  const proto = Object.getPrototypeOf(value);
  const plain = Array.isArray(value) || proto === Object.prototype || proto === null;
  if (!plain) throw notJson(path, `an instance of ${value.constructor?.name ?? 'a class'}`);
  seen.add(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) checkJson(value[i], `${path}[${i}]`, seen);
  } else {
    for (const [field, inner] of Object.entries(value)) checkJson(inner, `${path}.${field}`, seen);
  }
  seen.delete(value);
}

function notJson(path: string, what: string): WaymarkError {
  return new WaymarkError(
    'MEMORY_INVALID',
    `a memory value must be JSON as it is; ${path} is ${what}`,
    { retryable: false, details: { path } },
  );
}
