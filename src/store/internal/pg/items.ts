// The memory items on PostgreSQL (ItemStore in store.ts); the SQL is in pg-items-sql.ts.

import type { ItemRecord, ItemSearch, NewItem } from '../../store.js';
import {
  checkAddress,
  checkItem,
  checkNamespace,
  checkSearch,
  decodeNamespace,
  encodeNamespace,
  prefixRange,
} from '../items.js';
import type { Row } from '../rows.js';
import type { PgConnection } from './connection.js';

export async function putItem(db: PgConnection, item: NewItem): Promise<ItemRecord> {
  checkItem(item);
  const ns = encodeNamespace(item.namespace);
  const { rows } = await db.query(db.sql.putItem, [ns, item.key, item.value, item.ttlMs ?? null]);
  return readItem(rows[0]!);
}

export async function getItem(
  db: PgConnection,
  namespace: readonly string[],
  key: string,
): Promise<ItemRecord | undefined> {
  checkAddress(namespace, key);
  const { rows } = await db.query(db.sql.getItem, [encodeNamespace(namespace), key]);
  return rows[0] === undefined ? undefined : readItem(rows[0]);
}

export async function searchItems(db: PgConnection, search: ItemSearch): Promise<ItemRecord[]> {
  checkSearch(search);
  const { from, to } = prefixRange(search.prefix);
  const filter = Object.keys(search.filter ?? {}).length ? JSON.stringify(search.filter) : null;
  const { rows } = await db.query(db.sql.searchItems, [
    from,
    to,
    filter,
    search.limit ?? null,
    search.offset ?? 0,
  ]);
  return rows.map(readItem);
}

export async function listItemNamespaces(
  db: PgConnection,
  prefix: readonly string[],
): Promise<string[][]> {
  checkNamespace(prefix, true);
  const { from, to } = prefixRange(prefix);
  const { rows } = await db.query(db.sql.listItemNamespaces, [from, to]);
  return rows.map((row) => decodeNamespace(String(row.ns)));
}

export async function deleteItem(
  db: PgConnection,
  namespace: readonly string[],
  key: string,
): Promise<boolean> {
  checkAddress(namespace, key);
  const { rows } = await db.query(db.sql.deleteItem, [encodeNamespace(namespace), key]);
  return rows[0]?.live === true;
}

function readItem(row: Row): ItemRecord {
  return {
    namespace: decodeNamespace(String(row.ns)),
    key: String(row.key),
    value: String(row.value),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
  };
}
