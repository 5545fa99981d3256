import { useEffect, useState } from 'react';
import { splitToken } from './token.js';

/** Where the page is: the part of the fragment after `#`, as a path and its query. */
export interface Route {
  readonly path: string;
  readonly params: URLSearchParams;
}

function current(): Route {
  // A token in the fragment is not part of the route (the page takes it off the address bar).
  const raw = splitToken(location.hash).route.replace(/^#/, '') || '/runs';
  const [path = '/runs', q = ''] = raw.split('?');
  return { path, params: new URLSearchParams(q) };
}

/** The page's route, kept in the fragment (never sent to the server), updated on navigation. */
export function useRoute(): Route {
  const [route, setRoute] = useState(current);
  useEffect(() => {
    const on = () => setRoute(current());
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return route;
}

export function href(path: string, params?: Readonly<Record<string, string | undefined>>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params ?? {})) if (v !== undefined && v !== '') q.set(k, v);
  const s = q.toString();
  return `#${path}${s === '' ? '' : `?${s}`}`;
}

export function go(path: string, params?: Readonly<Record<string, string | undefined>>): void {
  location.hash = href(path, params);
}
