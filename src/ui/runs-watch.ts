import { useEffect, useState } from 'react';
import { follow } from './sse.js';

/** What `GET /watch/runs` tells: each watched run's status, seq and liveness. */
export interface WatchedRuns {
  /** Bumped on every change: a view reads its page again. */
  readonly version: number;
  /** For running runs: whether a process drives it now (false: interrupted). */
  readonly live: ReadonlyMap<string, boolean>;
}

/** Follows the listing of runs live, for as long as the view that asked is shown (and wants it). */
export function useWatchedRuns(enabled = true): WatchedRuns {
  const [watched, setWatched] = useState<WatchedRuns>({ version: 0, live: new Map() });
  useEffect(() => {
    if (!enabled) return;
    const stop = new AbortController();
    void follow(
      '/watch/runs',
      (m) => {
        const { runs } = JSON.parse(m.data) as {
          runs: { runId: string; status: string; live: boolean }[];
        };
        const live = new Map(
          runs.filter((r) => r.status === 'running').map((r) => [r.runId, r.live]),
        );
        setWatched((w) => ({ version: w.version + 1, live }));
      },
      stop.signal,
    );
    return () => stop.abort();
  }, [enabled]);
  return watched;
}

/** A run's status as `waymark ls` names it: a running run no process drives is interrupted. */
export function statusLabel(status: string, live: boolean | undefined): string {
  return status === 'running' && live === false ? 'interrupted' : status;
}
