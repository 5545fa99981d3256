// The token comes in the URL's fragment (`#token=...`), which a browser never sends: it stays
// out of server and proxy logs. The page moves it into the tab's storage and off the address
// bar at once, so it is not left in the history or a screenshot. It may come with a route
// (`#/runs/<id>?token=...`): the page then opens that route.

const key = 'waymark.token';

/**
 * A fragment split into the token it carries, if any, and the route it names without it:
 * `#token=abc` is the runs list, `#/runs/r1?graph=g&token=abc` run r1.
 *
 * @example
 * splitToken('#/runs/r1?token=abc'); // { token: 'abc', route: '#/runs/r1' }
 */
export function splitToken(hash: string): { token?: string; route: string } {
  const raw = hash.replace(/^#/, '');
  const q = raw.indexOf('?');
  let path = q < 0 ? raw : raw.slice(0, q);
  const params = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
  if (!path.startsWith('/')) {
    // `#token=...`: parameters and no route.
    for (const [k, v] of new URLSearchParams(path)) params.append(k, v);
    path = '/runs';
  }
  const token = params.get('token') ?? undefined;
  params.delete('token');
  const rest = params.toString();
  return {
    ...(token !== undefined && token !== '' && { token }),
    route: `#${path}${rest === '' ? '' : `?${rest}`}`,
  };
}

/**
 * The token the URL's fragment carries, stored for the tab and taken off the address bar;
 * undefined when it carries none. Called at start, and again whenever the fragment changes (the
 * printed URL opened in a tab already on the page changes only the fragment).
 *
 * @example
 * window.addEventListener('hashchange', () => { const t = takeTokenFromUrl(); if (t) setToken(t); });
 */
export function takeTokenFromUrl(): string | undefined {
  const { token, route } = splitToken(location.hash);
  if (token === undefined) return undefined;
  sessionStorage.setItem(key, token);
  history.replaceState(null, '', `${location.pathname}${location.search}${route}`);
  return token;
}

/** The token of this tab: from the fragment (then stored), else the one stored earlier. */
export function takeToken(): string | undefined {
  return takeTokenFromUrl() ?? sessionStorage.getItem(key) ?? undefined;
}

export function keepToken(token: string): void {
  sessionStorage.setItem(key, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(key);
}
