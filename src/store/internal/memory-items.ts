import type { ItemRecord, ItemSearch, ItemStore, NewItem } from '../store.js';
import {
  byteOrder,
  checkAddress,
  checkItem,
  checkNamespace,
  checkSearch,
  decodeNamespace,
  encodeNamespace,
  matchesFilter,
  prefixRange,
} from './items.js';

/** A stored item with its namespace as the other stores keep it, for their order. */
interface Row {
  readonly ns: string;
  readonly item: ItemRecord;
}

/**
 * The memory items of a `MemoryStore`, by the store's clock. Expired items are dropped as a
 * search meets them, and when their address is written again.
 */
export class MemoryItems implements ItemStore {
  readonly #rows = new Map<string, Row>();
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
  }

  async putItem(item: NewItem): Promise<ItemRecord> {
    checkItem(item);
    const now = this.#now();
    const ns = encodeNamespace(item.namespace);
    const before = this.#live(ns, item.key, now);
    const record: ItemRecord = {
      namespace: [...item.namespace],
      key: item.key,
      value: item.value,
      createdAt: before?.createdAt ?? now,
      updatedAt: now,
      expiresAt: item.ttlMs == null ? null : now + item.ttlMs,
    };
    this.#rows.set(address(ns, item.key), { ns, item: record });
    return record;
  }

  async getItem(namespace: readonly string[], key: string): Promise<ItemRecord | undefined> {
    checkAddress(namespace, key);
    return this.#live(encodeNamespace(namespace), key, this.#now());
  }

  async searchItems(search: ItemSearch): Promise<ItemRecord[]> {
    checkSearch(search);
    const now = this.#now();
    const { from } = prefixRange(search.prefix);
    const found: Row[] = [];
    for (const [at, row] of this.#rows) {
      if (expired(row.item, now)) {
        this.#rows.delete(at);
        continue;
      }
      if (row.ns.startsWith(from) && matchesFilter(row.item.value, search.filter)) found.push(row);
    }
    found.sort((a, b) => byteOrder(a.ns, b.ns) || byteOrder(a.item.key, b.item.key));
    const offset = search.offset ?? 0;
    const end = search.limit === undefined ? undefined : offset + search.limit;
    return found.slice(offset, end).map((row) => row.item);
  }

  async listItemNamespaces(prefix: readonly string[]): Promise<string[][]> {
    checkNamespace(prefix, true);
    const { from } = prefixRange(prefix);
    const now = this.#now();
    const found = new Set<string>();
    for (const row of this.#rows.values())
      if (!expired(row.item, now) && row.ns.startsWith(from)) found.add(row.ns);
    return [...found].sort(byteOrder).map(decodeNamespace);
  }

  async deleteItem(namespace: readonly string[], key: string): Promise<boolean> {
    checkAddress(namespace, key);
    const ns = encodeNamespace(namespace);
    const live = this.#live(ns, key, this.#now()) !== undefined;
    this.#rows.delete(address(ns, key));
    return live;
  }

  #live(ns: string, key: string, now: number): ItemRecord | undefined {
    const row = this.#rows.get(address(ns, key));
    if (row === undefined) return undefined;
    if (!expired(row.item, now)) return row.item;
    this.#rows.delete(address(ns, key));
    return undefined;
  }
}

function address(ns: string, key: string): string {
  // U+0000 is in no namespace nor key (items.ts).
  return `${ns}\u0000${key}`;
}

function expired(item: ItemRecord, now: number): boolean {
  return item.expiresAt !== null && item.expiresAt <= now;
}
