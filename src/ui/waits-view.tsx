import { useEffect, useState } from 'react';
import { ApiError, get, query, runPath } from './api.js';
import { href } from './route.js';
import { useWatchedRuns } from './runs-watch.js';
import type { RunPage, Wait } from './types.js';
import { WaitForm } from './wait-form.js';

/** The open requests across runs, each with its form: the runs that wait, and what they ask. */
export function WaitsView() {
  const watched = useWatchedRuns();
  const [open, setOpen] = useState<{ runId: string; graph: string; wait: Wait }[]>();
  const [error, setError] = useState<string>();
  // biome-ignore lint/correctness/useExhaustiveDependencies: watched.version is the trigger
  useEffect(() => {
    let gone = false;
    void (async () => {
      try {
        const page = await get<RunPage>(`/runs${query({ status: 'waiting', limit: 100 })}`);
        const all = await Promise.all(
          page.runs.map(async (r) => {
            const { waits } = await get<{ waits: Wait[] }>(`${runPath(r.runId)}/waits?open=true`);
            return waits.map((wait) => ({ runId: r.runId, graph: r.graph, wait }));
          }),
        );
        if (!gone) setOpen(all.flat());
      } catch (e) {
        if (!gone) setError(e instanceof ApiError ? `${e.code}: ${e.message}` : String(e));
      }
    })();
    return () => {
      gone = true;
    };
  }, [watched.version]);
  return (
    <section>
      <div className="toolbar">
        <h1>Waits</h1>
        <span className="muted">open requests across runs, newest runs first</span>
      </div>
      {error !== undefined && <p className="error">{error}</p>}
      {open?.length === 0 && <p className="empty">Nothing waits for an answer.</p>}
      {open?.map(({ runId, graph, wait }) => (
        <div key={`${runId}/${wait.requestId}`} className="wait-card">
          <div className="muted">
            {graph} · <a href={href(`/runs/${encodeURIComponent(runId)}`, { graph })}>{runId}</a>
          </div>
          <WaitForm runId={runId} wait={wait} />
        </div>
      ))}
    </section>
  );
}
