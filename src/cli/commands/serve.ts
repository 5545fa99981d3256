import { exitCode } from '../exit-code.js';
import { graphsOf, servedRunLabels } from '../graphs-of.js';
import type { Io } from '../io.js';
import { openStore, whereIs } from '../session.js';
import { untilStopped } from '../until-stopped.js';

interface ServeFlags {
  readonly graphs: string;
  readonly port: string;
  readonly host: string;
  readonly cors?: string;
  readonly graceMs: string;
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
  const graceMs = Number(flags.graceMs);
  if (!/^\d+$/.test(flags.graceMs)) {
    const { WaymarkError } = await import('../../error/waymark-error.js');
    throw new WaymarkError(
      'USAGE_INVALID',
      `--grace-ms ${flags.graceMs} must be a whole number of milliseconds`,
      { retryable: false },
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
    drainGraceMs: graceMs,
    runLabels: servedRunLabels,
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
  const stopped = untilStopped();
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
    const exposed = exposure(flags.host);
    if (exposed !== undefined)
      out.error(
        `warning: --host ${flags.host} listens on ${exposed}: whoever can reach this machine can call the API with the token; keep the token secret and put TLS in front of it (docs/server.md)`,
      );
    out.line('SIGTERM or Ctrl-C stops it');
    if ((await stopped) === 'parent-gone')
      out.error('the process that started waymark serve is gone: stopping');
    return exitCode.succeeded;
  } finally {
    await served.close();
    await store.close();
  }
}

/**
 * What other machines can reach when the server listens on `host`: undefined for a loopback
 * address (this machine only), else what to warn of.
 *
 * @example
 * exposure('0.0.0.0'); // 'every network interface'
 */
export function exposure(host: string): string | undefined {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost' || bare === '::1' || /^127\.\d+\.\d+\.\d+$/.test(bare)) return undefined;
  if (bare === '0.0.0.0' || bare === '::' || bare === '') return 'every network interface';
  return 'an address other machines may reach';
}
