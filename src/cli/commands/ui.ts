import { spawn } from 'node:child_process';
import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import { labelsOf } from '../../runtime/ops/labels.js';
import { exitCode } from '../exit-code.js';
import { graphsOf, noteGraphFile, servedRunLabels } from '../graphs-of.js';
import type { Io } from '../io.js';
import { type CliStore, graphFileLabel, openStore, whereIs } from '../session.js';
import { untilStopped } from '../until-stopped.js';

interface UiFlags {
  readonly graphs?: string;
  readonly port: string;
  readonly open: boolean;
}

/**
 * `waymark ui`: the web page and the HTTP API on 127.0.0.1, until SIGTERM or Ctrl-C. The URL it
 * prints carries the token in its fragment (`#token=...`), which a browser never sends, so it
 * stays out of every log; the page keeps it for the tab and sends it as the bearer token.
 */
export async function ui(out: Io, flags: UiFlags): Promise<number> {
  const port = Number(flags.port);
  if (!/^\d+$/.test(flags.port) || port > 65_535) {
    throw new WaymarkError(
      'USAGE_INVALID',
      `--port ${flags.port} must be a port number (0: any free one)`,
      { retryable: false },
    );
  }
  const { serve } = await import('../../server/serve.js');
  const { uiBuilt, uiDir } = await import('../../server/ui-assets.js');
  if (!uiBuilt()) {
    throw new WaymarkError(
      'USAGE_INVALID',
      `the web page is not built (no ${uiDir}index.html): run "npm run build" in the clone`,
      { retryable: false, details: { reason: 'ui-not-built' } },
    );
  }
  const store = await openStore(out, 'create');
  try {
    const graphs =
      flags.graphs === undefined ? await recordedGraphs(out, store) : await graphsOf(flags.graphs);
    const served = await serve({
      store,
      graphs,
      port,
      ui: uiDir,
      runLabels: servedRunLabels,
      onBackground: (runId, outcome) => {
        if (outcome instanceof Error) out.error(`run ${runId}: ${outcome.message}`);
      },
    });
    const stopped = untilStopped();
    try {
      const page = `${served.url}/ui/#token=${encodeURIComponent(served.token)}`;
      out.json({ type: 'serving-ui', url: page, api: served.url, token: served.token });
      out.line(
        `waymark ui: ${graphs.map((g) => g.name).join(', ') || 'no graphs'} from ${whereIs(store)}`,
      );
      out.line(`open ${out.c.bold(page)}`);
      out.line('SIGTERM or Ctrl-C stops it');
      if (flags.open && out.tty && !process.env.CI) openBrowser(page);
      if ((await stopped) === 'parent-gone')
        out.error('the process that started waymark ui is gone: stopping');
      return exitCode.succeeded;
    } finally {
      await served.close();
    }
  } finally {
    await store.close();
  }
}

/**
 * Without --graphs: the graph files the command line recorded on the newest runs, so a page
 * opened after `waymark run` shows those runs with their graphs. One that no longer loads is
 * told on stderr and left out (its runs are listed, not drawn).
 */
async function recordedGraphs(out: Io, store: CliStore): Promise<CompiledGraph[]> {
  const files = new Set<string>();
  for (const run of await store.listRuns({ limit: 500 })) {
    const file = labelsOf(run)[graphFileLabel];
    if (file !== undefined) files.add(file);
  }
  const { loadGraph } = await import('../load-graph.js');
  const graphs = new Map<string, CompiledGraph>();
  for (const file of files) {
    try {
      const { graph } = await loadGraph(file);
      if (graphs.has(graph.name)) continue;
      noteGraphFile(graph, file);
      graphs.set(graph.name, graph);
    } catch (error) {
      out.error(`${file}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return [...graphs.values()];
}

/** Asks the desktop to open the page; if it cannot, the printed URL is there. */
function openBrowser(url: string): void {
  const [command, ...args] =
    process.platform === 'darwin'
      ? ['open', url]
      : process.platform === 'win32'
        ? ['cmd', '/c', 'start', '""', url]
        : ['xdg-open', url];
  try {
    const child = spawn(command!, args, { stdio: 'ignore', detached: true });
    child.on('error', () => {});
    child.unref();
  } catch {
    // No opener on this machine: the URL is printed.
  }
}
