import type { RunRecord } from '../store/store.js';
import { isoTime } from './wire-time.js';

/** A run record as the API shows it (its times in ISO 8601). */
export function runJson(r: RunRecord) {
  return {
    runId: r.id,
    graph: r.graph,
    graphHash: r.graphHash,
    status: r.status,
    seq: r.seq,
    createdAt: isoTime(r.createdAt),
    updatedAt: isoTime(r.updatedAt),
    labels: r.labels === null ? {} : (JSON.parse(r.labels) as Record<string, string>),
  };
}
