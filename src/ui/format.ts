// How times, durations and statuses read on the page.

export function duration(ms: number | undefined): string {
  if (ms === undefined) return '';
  if (ms < 1) return '<1 ms';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function when(at: number): string {
  const d = new Date(at);
  const today = new Date();
  const time = d.toLocaleTimeString(undefined, { hour12: false });
  return d.toDateString() === today.toDateString()
    ? time
    : `${d.toISOString().slice(0, 10)} ${time}`;
}

export function ago(at: number, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - at) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86_400)}d ago`;
}

export function json(value: unknown): string {
  return value === undefined ? '' : JSON.stringify(value, null, 2);
}

/** A UUID by its first 8 digits (its title has the rest); a run id someone chose, whole. */
export function shortId(id: string): string {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-/.test(id) ? `${id.slice(0, 8)}…` : id;
}
