// The work queue's rows as records, for both SQL stores: a value that cannot be read is
// STORE_CORRUPT naming its run (or worker), never a driver's or JSON's own error.

import { WaymarkError } from '../../error/waymark-error.js';
import type { ClaimedTask, InboxRecord, WorkerRecord } from '../store.js';
import { Columns, type Row } from './rows.js';

/** A tasks row as a task record (claimed or not: owner and epoch as the row has them). */
export function readTask(row: Row): ClaimedTask {
  const runId = String(row.run_id);
  const c = new Columns(row, { runId, table: 'tasks', key: String(row.activation) });
  return {
    runId: c.text('run_id'),
    activation: c.text('activation'),
    attempt: c.integer('attempt'),
    node: c.text('node'),
    graph: c.text('graph'),
    graphHash: c.text('graph_hash'),
    notBefore: row.not_before === null ? null : c.integer('not_before'),
    input: c.text('input'),
    owner: c.textOrNull('owner') ?? '',
    epoch: c.integer('epoch'),
    expiresAt: c.integer('expires_at'),
  };
}

/** An inbox row, its columns named `prefix` + id, attempt, at. */
export function readInbox(row: Row, runId: string, prefix = ''): InboxRecord {
  const c = new Columns(row, { runId, table: 'inbox' });
  return {
    id: c.integer(`${prefix}id`),
    runId,
    attempt: c.textOrNull(`${prefix}attempt`),
    at: c.time(`${prefix}at`),
  };
}

/** A workers row; `live` by the store's clock (`now`), or as the row says when given. */
export function readWorker(row: Row, now?: number): WorkerRecord {
  const id = String(row.id);
  const c = new Columns(row, { runId: id, table: 'workers' });
  const expiresAt = c.integer('expires_at');
  let graphs: unknown;
  try {
    graphs = JSON.parse(c.text('graphs'));
  } catch {
    graphs = undefined;
  }
  const valid =
    Array.isArray(graphs) &&
    graphs.every(
      (g) =>
        typeof g === 'object' &&
        g !== null &&
        typeof (g as { name?: unknown }).name === 'string' &&
        typeof (g as { hash?: unknown }).hash === 'string',
    );
  if (!valid) {
    throw new WaymarkError(
      'STORE_CORRUPT',
      `worker "${id}" cannot be read: its workers row holds no list of graphs in column graphs`,
      { retryable: false, details: { workerId: id, table: 'workers', column: 'graphs' } },
    );
  }
  return {
    id: c.text('id'),
    host: c.text('host'),
    pid: c.integer('pid'),
    graphs: graphs as WorkerRecord['graphs'],
    expiresAt,
    live: now === undefined ? row.live === true : expiresAt > now,
  };
}
