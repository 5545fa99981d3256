import type { RunRecord } from '../store/store.js';

/** A run record as the API shows it. */
export function runJson(r: RunRecord) {
  return {
    runId: r.id,
    graph: r.graph,
    graphHash: r.graphHash,
    status: r.status,
    seq: r.seq,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    labels: r.labels === null ? {} : (JSON.parse(r.labels) as Record<string, string>),
  };
}
