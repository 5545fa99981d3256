import { describe, expect, it } from 'vitest';
import {
  isPostgres,
  postgresTarget,
  shownLocation,
  storeLocation,
} from '../../src/cli/location.js';

// Where a command keeps its runs: a SQLite file by default, a PostgreSQL database when the
// location is a postgres:// URL. The URL may carry waymark's own settings, which node-postgres
// never sees.

describe('the store location', () => {
  const given = (...names: string[]) => new Set(names);

  it('is --store, else --db, else WAYMARK_STORE, else the default file', () => {
    const env = { WAYMARK_STORE: 'postgres://db/app' };
    const flags = { db: 'runs.db', store: 'postgres://other/app' };
    expect(storeLocation(flags, given('store', 'db'), env)).toEqual({
      location: 'postgres://other/app',
      given: true,
    });
    expect(storeLocation(flags, given('db'), env)).toEqual({ location: 'runs.db', given: true });
    expect(storeLocation({ db: '.waymark/waymark.db' }, given(), env)).toEqual({
      location: 'postgres://db/app',
      given: false,
    });
    expect(storeLocation({ db: '.waymark/waymark.db' }, given(), {})).toEqual({
      location: '.waymark/waymark.db',
      given: false,
    });
  });

  it('names PostgreSQL by its scheme, and anything else is a file path', () => {
    expect(isPostgres('postgres://db/app')).toBe(true);
    expect(isPostgres('postgresql://db/app')).toBe(true);
    expect(isPostgres('./postgres.db')).toBe(false);
  });

  it('takes the schema and notify settings out of the URL node-postgres connects with', () => {
    expect(
      postgresTarget('postgres://u@db:5432/app?schema=runs&notify=off&sslmode=require'),
    ).toEqual({
      connectionString: 'postgres://u@db:5432/app?sslmode=require',
      schema: 'runs',
      notify: false,
    });
    expect(postgresTarget('postgres://db/app')).toEqual({ connectionString: 'postgres://db/app' });
    expect(postgresTarget('postgres://db/app?notify=on').notify).toBe(true);
  });

  it('refuses a notify setting that is neither on nor off, naming both', () => {
    expect(() => postgresTarget('postgres://db/app?notify=sometimes')).toThrowError(
      expect.objectContaining({
        code: 'USAGE_INVALID',
        message: expect.stringContaining('notify=off'),
      }),
    );
  });

  it('takes pooling=transaction out of the URL, for PgBouncer in transaction mode', () => {
    expect(postgresTarget('postgres://db:6432/app?pooling=transaction')).toEqual({
      connectionString: 'postgres://db:6432/app',
      transactionPooling: true,
    });
    expect(postgresTarget('postgres://db/app?pooling=session')).toEqual({
      connectionString: 'postgres://db/app',
    });
    expect(() => postgresTarget('postgres://db/app?pooling=statement')).toThrowError(
      expect.objectContaining({
        code: 'USAGE_INVALID',
        message: expect.stringContaining('pooling=transaction'),
      }),
    );
  });

  it('never prints a password', () => {
    expect(shownLocation('postgres://app:s3cret@db/app')).toBe('postgres://app:***@db/app');
    expect(shownLocation('runs.db')).toBe('runs.db');
  });
});
