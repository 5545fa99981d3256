import { execFileSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A PostgreSQL server of a test's own, for the tests that must stop or restart a server: initdb
// into a temporary directory, started by pg_ctl on a free port with trust authentication and
// its unix socket in that directory. The machine's server is never touched: a test that stops
// a server it did not start breaks every other connection on it (other test files, other
// people's measurements on a shared runner). initdb refuses to run as root, so under root the
// binaries run as the `postgres` OS user, in a directory it owns.

/** Where the installed PostgreSQL's server binaries are (WAYMARK_PG_BIN overrides). */
export const pgBin = process.env.WAYMARK_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** Why no throwaway server can be started here, or undefined when one can. */
export const throwawaySkipReason: string | undefined = (() => {
  if (!existsSync(join(pgBin, 'initdb')) || !existsSync(join(pgBin, 'pg_ctl')))
    return `no initdb/pg_ctl in ${pgBin}; set WAYMARK_PG_BIN`;
  if (process.getuid?.() === 0 && osUser('postgres') === undefined)
    return 'running as root and there is no "postgres" OS user to run initdb as';
  return undefined;
})();

/** The uid and gid of an OS user, or undefined when there is none. */
function osUser(name: string): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    return undefined;
  }
}

/** A port nobody listens on now (the kernel's pick; the server takes it moments later). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A server of the test's own. */
export interface ThrowawayPostgres {
  /** A connection string to its `postgres` database, as user `postgres` without a password. */
  readonly url: string;
  readonly port: number;
  /** The temporary directory: data directory, unix socket and server log. */
  readonly dir: string;
  /** Whether the server runs now. */
  readonly running: boolean;
  start(): void;
  /** Stops it fast (`-m fast`: connections are terminated, as in a real restart). */
  stop(): void;
  restart(): void;
  /** Stops it (immediately) and removes its directory; safe to call twice. */
  destroy(): void;
  /** The server log so far, for a failing test's message. */
  log(): string;
}

/** Settings every throwaway server gets: durability is not what these tests measure. */
const quickSettings: Record<string, string> = {
  fsync: 'off',
  synchronous_commit: 'off',
  full_page_writes: 'off',
  max_connections: '100',
};

/**
 * Creates and starts a throwaway server. `settings` go into its postgresql.conf. It is stopped
 * and removed by {@link ThrowawayPostgres.destroy}, or when the process exits.
 */
export async function startThrowawayPostgres(
  settings: Record<string, string> = {},
): Promise<ThrowawayPostgres> {
  if (throwawaySkipReason !== undefined) throw new Error(throwawaySkipReason);
  const owner = process.getuid?.() === 0 ? osUser('postgres') : undefined;
  const dir = mkdtempSync(join(tmpdir(), 'waymark-pg-'));
  if (owner !== undefined) chownSync(dir, owner.uid, owner.gid);
  const data = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  /** Runs one PostgreSQL binary, as `postgres` under root; argv only, never a shell string. */
  const run = (binary: string, args: readonly string[]) => {
    const argv = [join(pgBin, binary), ...args];
    const [command, ...rest] =
      owner === undefined ? argv : ['runuser', '-u', 'postgres', '--', ...argv];
    return execFileSync(command!, rest, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  };
  run('initdb', [
    '-D',
    data,
    '-A',
    'trust',
    '-U',
    'postgres',
    '-E',
    'UTF8',
    '--locale=C',
    '--no-sync',
  ]);
  const port = await freePort();
  // Appended by this process (root or not): the file stays the server's, readable by it.
  const conf = {
    ...quickSettings,
    ...settings,
    port: String(port),
    listen_addresses: "'127.0.0.1'",
    unix_socket_directories: `'${dir}'`,
  };
  appendFileSync(
    join(data, 'postgresql.conf'),
    `\n# throwaway-postgres.ts\n${Object.entries(conf)
      .map(([key, value]) => `${key} = ${value}`)
      .join('\n')}\n`,
  );
  let running = false;
  let destroyed = false;
  const server: ThrowawayPostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dir,
    get running() {
      return running;
    },
    start() {
      run('pg_ctl', ['-D', data, '-l', logFile, '-w', '-t', '60', 'start']);
      running = true;
    },
    stop() {
      run('pg_ctl', ['-D', data, '-w', '-t', '60', '-m', 'fast', 'stop']);
      running = false;
    },
    restart() {
      run('pg_ctl', ['-D', data, '-l', logFile, '-w', '-t', '60', '-m', 'fast', 'restart']);
      running = true;
    },
    destroy() {
      if (destroyed) return;
      destroyed = true;
      process.off('exit', server.destroy);
      if (running) {
        try {
          run('pg_ctl', ['-D', data, '-w', '-t', '30', '-m', 'immediate', 'stop']);
        } catch {
          // Already gone: the directory goes all the same.
        }
        running = false;
      }
      rmSync(dir, { recursive: true, force: true });
    },
    log() {
      return existsSync(logFile) ? readFileSync(logFile, 'utf8') : '';
    },
  };
  // A test process that dies without its afterAll still leaves no server behind.
  process.on('exit', server.destroy);
  try {
    server.start();
  } catch (error) {
    const log = server.log();
    server.destroy();
    throw new Error(`the throwaway PostgreSQL did not start: ${(error as Error).message}\n${log}`);
  }
  return server;
}
