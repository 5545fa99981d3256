// Where the command keeps its runs: a SQLite file (--db, the default) or a PostgreSQL database
// (--store postgres://..., or WAYMARK_STORE). Read once, as every command starts.

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
 * A PostgreSQL location split into what node-postgres connects with and the waymark schema it
 * names (`?schema=runs`; default `waymark`), which node-postgres would not understand.
 *
 * @example
 * postgresTarget('postgres://db/app?schema=runs'); // { connectionString: 'postgres://db/app', schema: 'runs' }
 */
export function postgresTarget(location: string): { connectionString: string; schema?: string } {
  const url = new URL(location);
  const schema = url.searchParams.get('schema') ?? undefined;
  url.searchParams.delete('schema');
  return { connectionString: url.toString(), ...(schema !== undefined && { schema }) };
}

/** A location as messages print it: a file path as it is, a database URL without its password. */
export function shownLocation(location: string): string {
  return isPostgres(location) ? location.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@') : location;
}
