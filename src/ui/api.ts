// The page's only way to the server: the API on its own origin, with the bearer token.

/** A refusal of the API: its code and message, as `waymark answer` would print them. */
export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  readonly details: unknown;
  constructor(code: string, message: string, status: number, details: unknown) {
    super(message);
    this.code = code;
    this.status = status;
    this.details = details;
  }
}

let token = '';

/** Told on the window when the server refuses the token. */
export const tokenRefused = 'waymark:token-refused';

/** The token the requests carry, from the URL's fragment or the tab's storage. */
export function setToken(value: string): void {
  token = value;
}

export function authHeaders(): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, {
    method,
    headers: {
      ...authHeaders(),
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const json = (await res.json().catch(() => null)) as {
    error?: { code: string; message: string; details: unknown };
  } | null;
  if (!res.ok) {
    const e = json?.error;
    // A token the server does not take (another server's, an old one): ask for the right one.
    if (res.status === 401) window.dispatchEvent(new Event(tokenRefused));
    const code = e?.code ?? 'INTERNAL';
    // The server's message starts with its code; the page shows the code apart.
    const message = (e?.message ?? res.statusText).replace(new RegExp(`^${code}: `), '');
    throw new ApiError(code, message, res.status, e?.details);
  }
  return json as T;
}

export const get = <T>(path: string): Promise<T> => request<T>('GET', path);
export const post = <T>(path: string, body: unknown = {}): Promise<T> =>
  request<T>('POST', path, body);
export const del = <T>(path: string): Promise<T> => request<T>('DELETE', path);

/** A query string of the values set. */
export function query(values: Readonly<Record<string, string | number | undefined>>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}

export const runPath = (runId: string) => `/runs/${encodeURIComponent(runId)}`;
