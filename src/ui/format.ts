// How times, durations and statuses read on the page.

export function duration(ms: number | undefined): string {
  if (ms === undefined) return '';
  if (ms < 1) return '<1 ms';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min ${Math.floor((ms % 60_000) / 1000)} s`;
  if (ms < 86_400_000)
    return `${Math.floor(ms / 3_600_000)} h ${Math.floor((ms % 3_600_000) / 60_000)} min`;
  return `${Math.floor(ms / 86_400_000)} d ${Math.floor((ms % 86_400_000) / 3_600_000)} h`;
}

/** A point in time the API gave (ISO 8601), in ms since the epoch. */
export function msOf(at: string | number): number {
  return typeof at === 'number' ? at : Date.parse(at);
}

export function when(at: string | number): string {
  const d = new Date(msOf(at));
  const today = new Date();
  const time = d.toLocaleTimeString(undefined, { hour12: false });
  return d.toDateString() === today.toDateString()
    ? time
    : `${d.toISOString().slice(0, 10)} ${time}`;
}

export function ago(at: string | number, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - msOf(at)) / 1000));
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
