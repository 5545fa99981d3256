import { useEffect, useState } from 'react';
import { setToken, tokenRefused } from './api.js';
import { href, useRoute } from './route.js';
import { RunView } from './run-view.js';
import { RunsView } from './runs-view.js';
import { SchedulesView } from './schedules-view.js';
import { forgetToken, keepToken, takeToken, takeTokenFromUrl } from './token.js';
import { WaitsView } from './waits-view.js';

const initial = takeToken();
if (initial !== undefined) setToken(initial);

/** The page: a header, and the view the fragment names (runs, one run, waits). */
export function App() {
  const route = useRoute();
  const [token, setGiven] = useState(initial);
  const [refused, setRefused] = useState(false);
  useEffect(() => {
    const on = () => {
      forgetToken();
      setRefused(true);
      setGiven(undefined);
    };
    // The printed URL opened in a tab already on the page: only the fragment changes, and the
    // page takes the token it brings, without a reload.
    const onHash = () => {
      const brought = takeTokenFromUrl();
      if (brought === undefined) return;
      setToken(brought);
      setRefused(false);
      setGiven(brought);
    };
    window.addEventListener(tokenRefused, on);
    window.addEventListener('hashchange', onHash);
    return () => {
      window.removeEventListener(tokenRefused, on);
      window.removeEventListener('hashchange', onHash);
    };
  }, []);
  if (token === undefined)
    return (
      <TokenForm
        refused={refused}
        onToken={(t) => {
          setRefused(false);
          setGiven(t);
        }}
      />
    );
  const runMatch = /^\/runs\/(.+)$/.exec(route.path);
  const view = runMatch ? (
    <RunView
      key={runMatch[1]}
      runId={decodeURIComponent(runMatch[1]!)}
      graph={route.params.get('graph') ?? undefined}
    />
  ) : route.path === '/waits' ? (
    <WaitsView />
  ) : route.path === '/schedules' ? (
    <SchedulesView />
  ) : (
    <RunsView params={route.params} />
  );
  return (
    <div className="app">
      <header className="top">
        <a className="brand" href={href('/runs')}>
          waymark
        </a>
        <nav>
          <a className={route.path.startsWith('/runs') ? 'on' : ''} href={href('/runs')}>
            Runs
          </a>
          <a className={route.path === '/waits' ? 'on' : ''} href={href('/waits')}>
            Waits
          </a>
          <a className={route.path === '/schedules' ? 'on' : ''} href={href('/schedules')}>
            Schedules
          </a>
        </nav>
      </header>
      <main>{view}</main>
    </div>
  );
}

/** Without a token (the URL lost its fragment): ask for the one `waymark ui` printed. */
function TokenForm({ onToken, refused }: { onToken: (token: string) => void; refused: boolean }) {
  const [value, setValue] = useState('');
  return (
    <div className="app">
      <main className="narrow">
        <h1>waymark</h1>
        <p>
          This page needs the token <code>waymark ui</code> printed: open the URL it printed, or
          paste the token here.
        </p>
        {refused && (
          <p className="error" role="alert">
            The server did not take the token this tab had: it belongs to another start of
            <code> waymark ui</code>.
          </p>
        )}
        <form
          onSubmit={(e) => {
            e.preventDefault();
            keepToken(value.trim());
            setToken(value.trim());
            onToken(value.trim());
          }}
        >
          <input
            aria-label="token"
            value={value}
            onChange={(e) => setValue(e.target.value)}
            placeholder="token"
          />
          <button type="submit">Use token</button>
        </form>
      </main>
    </div>
  );
}
