import { useEffect, useState } from 'react';
import { ApiError, get, runPath } from './api.js';
import { ago, when } from './format.js';
import { href } from './route.js';
import type { RunDetail, Schedule } from './types.js';

/** How often the list is read again: a tick is seldom, and the list has no stream of its own. */
const refreshMs = 5_000;

/** When a time to come is, from now: `in 5m`. */
function until(at: string, now = Date.now()): string {
  const s = Math.max(0, Math.round((Date.parse(at) - now) / 1000));
  if (s < 60) return `in ${s}s`;
  if (s < 3600) return `in ${Math.floor(s / 60)}m`;
  if (s < 86_400) return `in ${Math.floor(s / 3600)}h`;
  return `in ${Math.floor(s / 86_400)}d`;
}

/**
 * The schedules of the served graphs: each with its cron expression and time zone, its next
 * tick, and its last run (with that run's status, read from the run itself).
 */
export function SchedulesView() {
  const [schedules, setSchedules] = useState<readonly Schedule[]>();
  const [statuses, setStatuses] = useState<ReadonlyMap<string, string>>(new Map());
  const [error, setError] = useState<string>();

  useEffect(() => {
    let gone = false;
    const read = async () => {
      try {
        const { schedules: listed } = await get<{ schedules: Schedule[] }>('/schedules');
        const last = listed.flatMap((s) => (s.lastRunId === null ? [] : [s.lastRunId]));
        const runs = await Promise.all(
          last.map((id) =>
            get<RunDetail>(runPath(id)).then(
              (r) => [id, r.status] as const,
              () => [id, 'unknown'] as const,
            ),
          ),
        );
        if (gone) return;
        setSchedules(listed);
        setStatuses(new Map(runs));
        setError(undefined);
      } catch (e) {
        if (!gone) setError(e instanceof ApiError ? `${e.code}: ${e.message}` : String(e));
      }
    };
    void read();
    const timer = setInterval(() => void read(), refreshMs);
    return () => {
      gone = true;
      clearInterval(timer);
    };
  }, []);

  return (
    <section>
      <div className="toolbar">
        <h1>Schedules</h1>
      </div>
      {error !== undefined && <p className="error">{error}</p>}
      <table className="runs schedules">
        <thead>
          <tr>
            <th>schedule</th>
            <th>graph</th>
            <th>cron</th>
            <th>next run</th>
            <th>last run</th>
            <th>overlap / catch-up</th>
          </tr>
        </thead>
        <tbody>
          {schedules?.map((s) => {
            const status = s.lastRunId === null ? undefined : statuses.get(s.lastRunId);
            return (
              <tr key={s.id} data-schedule={s.id}>
                <td title={s.id}>{s.id}</td>
                <td>{s.graph}</td>
                <td>
                  <code>{s.cron}</code> {s.timezone}
                </td>
                <td data-next>
                  {s.paused ? (
                    <span className="status cancelled">paused</span>
                  ) : s.nextAt === null ? (
                    'none'
                  ) : (
                    <span title={s.nextAt}>
                      {when(s.nextAt)} ({until(s.nextAt)})
                    </span>
                  )}
                  {s.bufferedAt !== null && <span> + one held back</span>}
                </td>
                <td data-last>
                  {s.lastRunId === null ? (
                    'none yet'
                  ) : (
                    <>
                      <a
                        href={href(`/runs/${encodeURIComponent(s.lastRunId)}`, { graph: s.graph })}
                        title={s.lastRunId}
                      >
                        {s.lastTickAt === null ? s.lastRunId : when(s.lastTickAt)}
                      </a>{' '}
                      {status !== undefined && <span className={`status ${status}`}>{status}</span>}
                      {s.lastTickAt !== null && <span> {ago(s.lastTickAt)}</span>}
                    </>
                  )}
                </td>
                <td>
                  {s.overlap} / {s.catchUp}
                </td>
              </tr>
            );
          })}
          {schedules?.length === 0 && (
            <tr>
              <td colSpan={6} className="empty">
                No schedules yet: <code>waymark schedule add</code> stores one.
              </td>
            </tr>
          )}
        </tbody>
      </table>
    </section>
  );
}
