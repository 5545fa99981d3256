import type Database from 'better-sqlite3';
import type { ItemRecord, ItemSearch, ItemStore, NewItem } from '../store.js';
import {
  checkAddress,
  checkItem,
  checkNamespace,
  checkSearch,
  decodeNamespace,
  encodeNamespace,
  prefixRange,
} from './items.js';
import { unavailable } from './sqlite-errors.js';

// The memory items of a SQLite store (table `items`, migration 7), by the store's clock. Each
// put also deletes a bounded batch of expired items, so the table does not keep what no read
// returns; reads skip the expired ones left.

const columns = 'ns, key, value, created_at, updated_at, expires_at';

const live = '(expires_at IS NULL OR expires_at > :now)';

const sql = {
  sweep: `DELETE FROM items WHERE rowid IN (
      SELECT rowid FROM items WHERE expires_at <= :now LIMIT 100)`,
  // An item written over once it has expired is a new one: its createdAt is this put's.
  put: `INSERT INTO items (${columns}) VALUES (:ns, :key, :value, :now, :now, :expiresAt)
    ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at,
      expires_at = excluded.expires_at,
      created_at = CASE WHEN items.expires_at <= excluded.updated_at THEN excluded.created_at
        ELSE items.created_at END
    RETURNING ${columns}`,
  get: `SELECT ${columns} FROM items WHERE ns = :ns AND key = :key AND ${live}`,
  // A filter field matches a value's top-level field of the same JSON type (any number is a
  // number) and the same atom: compared by json_each, so a field's name needs no path quoting.
  search: `SELECT ${columns} FROM items
    WHERE ns >= :from AND (:to IS NULL OR ns < :to) AND ${live}
      AND (:filter IS NULL OR (json_type(value) = 'object' AND NOT EXISTS (
        SELECT 1 FROM json_each(:filter) f WHERE NOT EXISTS (
          SELECT 1 FROM json_each(items.value) v WHERE v.key = f.key AND v.atom IS f.atom
            AND (v.type = f.type
              OR (v.type IN ('integer', 'real') AND f.type IN ('integer', 'real')))))))
    ORDER BY ns, key LIMIT :limit OFFSET :offset`,
  namespaces: `SELECT DISTINCT ns FROM items
    WHERE ns >= :from AND (:to IS NULL OR ns < :to) AND ${live} ORDER BY ns`,
  delete: `DELETE FROM items WHERE ns = :ns AND key = :key RETURNING expires_at`,
} as const;

type Statements = { readonly [K in keyof typeof sql]: Database.Statement };

/** The memory items of one SQLite store's connection. */
export class SqliteItems implements ItemStore {
  readonly #db: Database.Database;
  readonly #path: string;
  readonly #now: () => number;
  #sql: Statements | undefined;

  constructor(db: Database.Database, path: string, now: () => number) {
    this.#db = db;
    this.#path = path;
    this.#now = now;
  }

  async putItem(item: NewItem): Promise<ItemRecord> {
    checkItem(item);
    return this.#run((s) => {
      const now = this.#now();
      const expiresAt = item.ttlMs == null ? null : now + item.ttlMs;
      const ns = encodeNamespace(item.namespace);
      return this.#db
        .transaction(() => {
          s.sweep.run({ now });
          return readItem(s.put.get({ ns, key: item.key, value: item.value, now, expiresAt }));
        })
        .immediate();
    });
  }

  async getItem(namespace: readonly string[], key: string): Promise<ItemRecord | undefined> {
    checkAddress(namespace, key);
    return this.#run((s) => {
      const row = s.get.get({ ns: encodeNamespace(namespace), key, now: this.#now() });
      return row === undefined ? undefined : readItem(row);
    });
  }

  async searchItems(search: ItemSearch): Promise<ItemRecord[]> {
    checkSearch(search);
    const filter = Object.keys(search.filter ?? {}).length ? JSON.stringify(search.filter) : null;
    return this.#run((s) =>
      s.search
        .all({
          ...prefixRange(search.prefix),
          filter,
          now: this.#now(),
          limit: search.limit ?? -1,
          offset: search.offset ?? 0,
        })
        .map(readItem),
    );
  }

  async listItemNamespaces(prefix: readonly string[]): Promise<string[][]> {
    checkNamespace(prefix, true);
    return this.#run((s) =>
      (s.namespaces.all({ ...prefixRange(prefix), now: this.#now() }) as { ns: string }[]).map(
        (row) => decodeNamespace(row.ns),
      ),
    );
  }

  async deleteItem(namespace: readonly string[], key: string): Promise<boolean> {
    checkAddress(namespace, key);
    return this.#run((s) => {
      const now = this.#now();
      const row = s.delete.get({ ns: encodeNamespace(namespace), key }) as
        | { expires_at: number | null }
        | undefined;
      return row !== undefined && (row.expires_at === null || row.expires_at > now);
    });
  }

  #run<T>(fn: (s: Statements) => T): T {
    try {
      this.#sql ??= Object.fromEntries(
        Object.entries(sql).map(([name, text]) => [name, this.#db.prepare(text)]),
      ) as unknown as Statements;
      return fn(this.#sql);
    } catch (error) {
      throw unavailable(this.#path, error);
    }
  }
}

function readItem(row: unknown): ItemRecord {
  const r = row as Record<string, unknown>;
  return {
    namespace: decodeNamespace(String(r.ns)),
    key: String(r.key),
    value: String(r.value),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    expiresAt: r.expires_at === null ? null : Number(r.expires_at),
  };
}
