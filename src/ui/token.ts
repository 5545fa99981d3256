// The token comes in the URL's fragment (`#token=...`), which a browser never sends: it stays
// out of server and proxy logs. The page moves it into the tab's storage and off the address
// bar at once, so it is not left in the history or a screenshot.

const key = 'waymark.token';

/** The token of this tab: from the fragment (then stored), else the one stored earlier. */
export function takeToken(): string | undefined {
  const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (m !== null) {
    const token = decodeURIComponent(m[1]!);
    sessionStorage.setItem(key, token);
    history.replaceState(null, '', `${location.pathname}#/runs`);
    return token;
  }
  return sessionStorage.getItem(key) ?? undefined;
}

export function keepToken(token: string): void {
  sessionStorage.setItem(key, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(key);
}
