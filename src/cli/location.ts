// Where the command keeps its runs: a SQLite file (--db, the default) or a PostgreSQL database
// (--store postgres://..., or WAYMARK_STORE). Read once, as every command starts.

import { WaymarkError } from '../error/waymark-error.js';

/** Whether a store location names a PostgreSQL database rather than a SQLite file. */
export function isPostgres(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/**
 * The location a command uses: `--store`, else `--db` when given, else the `WAYMARK_STORE`
 * environment variable, else the default file. Whether it came from the command line decides
 * whether the commands the CLI suggests repeat it.
 *
 * @example
 * storeLocation({ db: '.waymark/waymark.db', store: undefined }, new Set(), process.env);
 */
export function storeLocation(
  flags: { readonly db: string; readonly store?: string | boolean },
  given: ReadonlySet<string> | ((name: string) => boolean),
  env: NodeJS.ProcessEnv,
): { readonly location: string; readonly given: boolean } {
  const isGiven = typeof given === 'function' ? given : (name: string) => given.has(name);
  if (typeof flags.store === 'string' && isGiven('store'))
    return { location: flags.store, given: true };
  if (isGiven('db')) return { location: flags.db, given: true };
  const fromEnv = env.WAYMARK_STORE;
  if (fromEnv !== undefined && fromEnv !== '') return { location: fromEnv, given: false };
  return { location: flags.db, given: false };
}

/**
 * A PostgreSQL location split into what node-postgres connects with and the waymark settings it
 * carries, which node-postgres would not understand: the schema (`?schema=runs`; default
 * `waymark`), `?notify=off` to poll only, and `?pooling=transaction` for a database behind
 * PgBouncer in transaction mode (unnamed statements, nothing set per session, no LISTEN).
 *
 * @example
 * postgresTarget('postgres://db/app?schema=runs'); // { connectionString: 'postgres://db/app', schema: 'runs' }
 * @throws WaymarkError `USAGE_INVALID` for a `notify` that is neither on nor off.
 */
export function postgresTarget(location: string): {
  connectionString: string;
  schema?: string;
  notify?: boolean;
  transactionPooling?: boolean;
} {
  const url = new URL(location);
  const schema = url.searchParams.get('schema') ?? undefined;
  const notify = onOff(url.searchParams.get('notify'));
  const pooling = url.searchParams.get('pooling');
  if (pooling !== null && pooling !== 'transaction' && pooling !== 'session') {
    throw new WaymarkError(
      'USAGE_INVALID',
      `pooling=${pooling} in the store location: say pooling=transaction (behind PgBouncer in transaction mode) or pooling=session (the default)`,
      { retryable: false, details: { pooling } },
    );
  }
  url.searchParams.delete('schema');
  url.searchParams.delete('notify');
  url.searchParams.delete('pooling');
  return {
    connectionString: url.toString(),
    ...(schema !== undefined && { schema }),
    ...(notify !== undefined && { notify }),
    ...(pooling === 'transaction' && { transactionPooling: true }),
  };
}

function onOff(value: string | null): boolean | undefined {
  if (value === null) return undefined;
  if (/^(on|true|1)$/i.test(value)) return true;
  if (/^(off|false|0)$/i.test(value)) return false;
  throw new WaymarkError(
    'USAGE_INVALID',
    `notify=${value} in the store location: say notify=on (LISTEN/NOTIFY wake-ups, the default) or notify=off (poll only, behind PgBouncer in transaction mode)`,
    { retryable: false, details: { notify: value } },
  );
}

/** A location as messages print it: a file path as it is, a database URL without its password. */
export function shownLocation(location: string): string {
  return isPostgres(location) ? location.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@') : location;
}
