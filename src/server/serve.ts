import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve as listen } from '@hono/node-server';
import { type AppOptions, createApp } from './app.js';

/** Options of {@link serve}: the API's, and where it listens. */
export interface ServeOptions extends Omit<AppOptions, 'token'> {
  /** The bearer token; default: `WAYMARK_TOKEN`, else a fresh random one. */
  readonly token?: string;
  /** Default 127.0.0.1: only this machine. */
  readonly host?: string;
  /** Default 0: any free port (the `url` says which). */
  readonly port?: number;
}

/** A running API server. */
export interface Served {
  readonly url: string;
  readonly token: string;
  /**
   * Stops taking requests, and gives back the runs it drives: their running nodes may finish
   * within `drainGraceMs`, then each run is left resumable with its lease released.
   */
  close(): Promise<void>;
}

/**
 * Starts the HTTP API (see `createApp`) on 127.0.0.1 by default, with a bearer token.
 *
 * @example
 * const { url, token, close } = await serve({ store, graphs: [triage] });
 */
export async function serve(options: ServeOptions): Promise<Served> {
  const token = options.token ?? process.env.WAYMARK_TOKEN ?? randomBytes(24).toString('base64url');
  const app = createApp({ ...options, token });
  const host = options.host ?? '127.0.0.1';
  const server = await new Promise<ReturnType<typeof listen>>((resolve, reject) => {
    const s = listen({ fetch: app.hono.fetch, hostname: host, port: options.port ?? 0 }, () =>
      resolve(s),
    );
    s.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}`,
    token,
    async close() {
      // Streams held open by watchers end with the server, and stop reading the store before
      // the caller closes it.
      const streams = app.stopStreams();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
      await streams;
      await app.drain();
    },
  };
}
