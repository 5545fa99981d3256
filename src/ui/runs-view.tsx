import { useEffect, useMemo, useState } from 'react';
import { ApiError, get, query } from './api.js';
import { ago, shortId, when } from './format.js';
import { go, href } from './route.js';
import { statusLabel, useWatchedRuns } from './runs-watch.js';
import { type GraphInfo, type RunPage, runStatuses } from './types.js';

const windows: Readonly<Record<string, number>> = {
  '1h': 3_600_000,
  '24h': 86_400_000,
  '7d': 7 * 86_400_000,
  '30d': 30 * 86_400_000,
};
const pageSize = 25;

/**
 * The runs, newest first, a page at a time from the server (its cursor), filtered by status,
 * graph and age, read again whenever the watched listing changes: no reload, no polling here.
 */
export function RunsView({ params }: { params: URLSearchParams }) {
  const status = params.get('status') ?? '';
  const graph = params.get('graph') ?? '';
  const within = params.get('within') ?? '';
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [page, setPage] = useState<RunPage>();
  const [graphs, setGraphs] = useState<readonly GraphInfo[]>([]);
  const [error, setError] = useState<string>();
  const watched = useWatchedRuns();
  const cursor = cursors.at(-1);
  // The window's start is fixed when the filter is chosen, so live updates keep the same page.
  const since = useMemo(
    () => (within in windows ? Date.now() - windows[within]! : undefined),
    [within],
  );
  // A new filter starts again at the newest page.
  const filters = `${status}|${graph}|${within}`;
  const [shown, setShown] = useState(filters);
  if (shown !== filters) {
    setShown(filters);
    setCursors([undefined]);
  }

  useEffect(() => {
    void get<{ graphs: GraphInfo[] }>('/graphs').then(
      (g) => setGraphs(g.graphs),
      () => {},
    );
  }, []);

  // biome-ignore lint/correctness/useExhaustiveDependencies: watched.version is the trigger
  useEffect(() => {
    let gone = false;
    get<RunPage>(`/runs${query({ status, graph, since, limit: pageSize, cursor })}`).then(
      (p) => {
        if (gone) return;
        setPage(p);
        setError(undefined);
      },
      (e: unknown) =>
        !gone && setError(e instanceof ApiError ? `${e.code}: ${e.message}` : String(e)),
    );
    return () => {
      gone = true;
    };
  }, [status, graph, since, cursor, watched.version]);

  const set = (k: string, v: string) =>
    go('/runs', { status, graph, within, [k]: v === '' ? undefined : v });

  return (
    <section>
      <div className="toolbar">
        <h1>Runs</h1>
        <label>
          status
          <select
            aria-label="status"
            value={status}
            onChange={(e) => set('status', e.target.value)}
          >
            <option value="">any</option>
            {runStatuses.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          graph
          <select aria-label="graph" value={graph} onChange={(e) => set('graph', e.target.value)}>
            <option value="">any</option>
            {graphs.map((g) => (
              <option key={g.name}>{g.name}</option>
            ))}
          </select>
        </label>
        <label>
          started
          <select
            aria-label="started"
            value={within}
            onChange={(e) => set('within', e.target.value)}
          >
            <option value="">any time</option>
            {Object.keys(windows).map((w) => (
              <option key={w} value={w}>
                in the last {w}
              </option>
            ))}
          </select>
        </label>
        <span className="live-dot" title="updates live">
          live
        </span>
      </div>
      {error !== undefined && <p className="error">{error}</p>}
      <table className="runs">
        <thead>
          <tr>
            <th>run</th>
            <th>graph</th>
            <th>status</th>
            <th>steps</th>
            <th>started</th>
            <th>updated</th>
          </tr>
        </thead>
        <tbody>
          {page?.runs.map((r) => {
            const label = statusLabel(r.status, watched.live.get(r.runId));
            return (
              <tr key={r.runId} data-run={r.runId}>
                <td>
                  <a
                    href={href(`/runs/${encodeURIComponent(r.runId)}`, { graph: r.graph })}
                    title={r.runId}
                  >
                    {shortId(r.runId)}
                  </a>
                </td>
                <td>{r.graph}</td>
                <td>
                  <span className={`status ${label}`}>{label}</span>
                </td>
                <td className="num">{r.seq}</td>
                <td>{when(r.createdAt)}</td>
                <td>{ago(r.updatedAt)}</td>
              </tr>
            );
          })}
          {page?.runs.length === 0 && (
            <tr>
              <td colSpan={6} className="empty">
                No runs{status || graph || within ? ' match these filters' : ' yet'}.
              </td>
            </tr>
          )}
        </tbody>
      </table>
      <div className="pager">
        <button
          type="button"
          disabled={cursors.length === 1}
          onClick={() => setCursors((c) => c.slice(0, -1))}
        >
          ← newer
        </button>
        <span>page {cursors.length}</span>
        <button
          type="button"
          disabled={page?.next == null}
          onClick={() => page?.next != null && setCursors((c) => [...c, page.next!])}
        >
          older →
        </button>
      </div>
    </section>
  );
}
