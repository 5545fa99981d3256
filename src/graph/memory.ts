// The memory kept across runs (LangGraph's `BaseStore`), as a node body and a program see it:
// typed here, where `NodeContext` is, and implemented one layer up (runtime/memory/).

/** A scalar a search filter compares a top-level field of an item's value with. */
export type MemoryScalar = string | number | boolean | null;

/**
 * One item of the memory (LangGraph's `Item`): a JSON value under a namespace and a key. Times
 * are ms since the epoch by the store's clock.
 */
export interface MemoryItem<V = unknown> {
  readonly namespace: readonly string[];
  readonly key: string;
  readonly value: V;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** When it stops being returned; null: never. */
  readonly expiresAt: number | null;
}

/** Options of {@link Memory.put}. */
export interface MemoryPutOptions {
  /** Expires this long after the put, by the store's clock; absent: never. */
  readonly ttlMs?: number;
}

/** Options of {@link Memory.search}. */
export interface MemorySearchOptions {
  /** Only items whose value is an object with each of these top-level fields equal to the scalar. */
  readonly filter?: Readonly<Record<string, MemoryScalar>>;
  /** At most this many (default 10, as LangGraph). */
  readonly limit?: number;
  /** After skipping this many matches (default 0). */
  readonly offset?: number;
}

/** Options of {@link Memory.listNamespaces} (LangGraph's `listNamespaces`). */
export interface MemoryNamespaceOptions {
  /** Namespaces that start with these parts; `'*'` matches any one part. */
  readonly prefix?: readonly string[];
  /** Namespaces that end with these parts; `'*'` matches any one part. */
  readonly suffix?: readonly string[];
  /** Each namespace cut to its first `maxDepth` parts (the same one then listed once). */
  readonly maxDepth?: number;
  /** At most this many (default 100, as LangGraph). */
  readonly limit?: number;
  /** After skipping this many (default 0). */
  readonly offset?: number;
}

/**
 * Namespaced items kept across runs (LangGraph's `BaseStore`): `memoryOf(store)` in a program, `ctx.memory` in a node
 * body, whose writes are recorded in the run's effect ledger (a body run again after a crash or
 * a resume does not write twice). Namespaces are non-empty lists of non-empty parts without a
 * period or a control character; values are any JSON. Errors: `MEMORY_INVALID`.
 *
 * @example
 * await ctx.memory.put(['users', s.userId], 'prefs', { theme: 'dark' });
 * const prefs = await ctx.memory.get<{ theme: string }>(['users', s.userId], 'prefs');
 */
export interface Memory {
  /** Writes the value (replacing one under the same namespace and key) and returns the item. */
  put<V>(
    namespace: readonly string[],
    key: string,
    value: V,
    options?: MemoryPutOptions,
  ): Promise<MemoryItem<V>>;
  /** The item, or undefined if there is none (or it expired). */
  get<V = unknown>(namespace: readonly string[], key: string): Promise<MemoryItem<V> | undefined>;
  /** Items under a namespace prefix (whole parts; `[]`: all), by namespace then key. */
  search<V = unknown>(
    prefix: readonly string[],
    options?: MemorySearchOptions,
  ): Promise<MemoryItem<V>[]>;
  /** Deletes the item; whether there was one. */
  delete(namespace: readonly string[], key: string): Promise<boolean>;
  /** The namespaces that hold an item, in the order of a search, each once. */
  listNamespaces(options?: MemoryNamespaceOptions): Promise<string[][]>;
}
