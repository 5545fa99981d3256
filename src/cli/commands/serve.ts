import { exitCode } from '../exit-code.js';
import { graphsOf } from '../graphs-of.js';
import type { Io } from '../io.js';
import { openStore, whereIs } from '../session.js';

interface ServeFlags {
  readonly graphs: string;
  readonly port: string;
  readonly host: string;
  readonly cors?: string;
}

/**
 * `waymark serve --graphs <module or folder>`: the HTTP API over the database, on 127.0.0.1 by
 * default, with a bearer token (WAYMARK_TOKEN, or a fresh one printed at start), until SIGTERM
 * or Ctrl-C; then it stops taking requests and lets the runs it drives stop.
 */
export async function serveApi(out: Io, flags: ServeFlags): Promise<number> {
  const port = Number(flags.port);
  if (!/^\d+$/.test(flags.port) || port > 65_535) {
    const { WaymarkError } = await import('../../error/waymark-error.js');
    throw new WaymarkError(
      'USAGE_INVALID',
      `--port ${flags.port} must be a port number (0: any free one)`,
      {
        retryable: false,
      },
    );
  }
  const graphs = await graphsOf(flags.graphs);
  const store = await openStore(out, 'create');
  const { serve } = await import('../../server/serve.js');
  const served = await serve({
    store,
    graphs,
    host: flags.host,
    port,
    ...(flags.cors !== undefined && {
      corsOrigins: flags.cors
        .split(',')
        .map((o) => o.trim())
        .filter((o) => o !== ''),
    }),
    // A run the API moved on went wrong after its request was answered: say so, here.
    onBackground: (runId, outcome) => {
      if (outcome instanceof Error) out.error(`run ${runId}: ${outcome.message}`);
    },
  });
  const stopped = new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  try {
    out.json({
      type: 'serving',
      url: served.url,
      token: served.token,
      graphs: graphs.map((g) => g.name),
    });
    out.line(
      `serving ${graphs.map((g) => g.name).join(', ')} from ${whereIs(store)} at ${out.c.bold(served.url)}`,
    );
    out.line(
      `token    ${served.token}  (send it as "Authorization: Bearer <token>"; WAYMARK_TOKEN sets it)`,
    );
    out.line('SIGTERM or Ctrl-C stops it');
    await stopped;
    return exitCode.succeeded;
  } finally {
    await served.close();
    await store.close();
  }
}
