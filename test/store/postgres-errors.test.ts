import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { WaymarkError } from '../../src/index.js';
import { quoteSchema, sqlstateOf, unavailable } from '../../src/store/internal/pg-errors.js';

// How the PostgreSQL store names driver failures, without a database: errors shaped as
// node-postgres and Node.js make them.

/** A server error as node-postgres gives it: a DatabaseError with its SQLSTATE in `code`. */
function serverError(sqlstate: string, message = 'server says no'): Error {
  const error = new pg.DatabaseError(message, 0, 'error');
  Object.assign(error, { code: sqlstate, severity: 'ERROR' });
  return error;
}

/** A Node.js system error (a socket's). */
function systemError(code: string): Error {
  return Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code });
}

describe('driver failures of the PostgreSQL store', () => {
  it.each([
    ['a terminated backend (57P01)', serverError('57P01'), '57P01'],
    ['a server shutting down (57P02)', serverError('57P02'), '57P02'],
    ['a server starting up (57P03)', serverError('57P03'), '57P03'],
    ['a connection failure the server reports (08006)', serverError('08006'), '08006'],
    ['a serialization failure (40001)', serverError('40001'), '40001'],
    ['a deadlock (40P01)', serverError('40P01'), '40P01'],
    ['a statement timeout (57014)', serverError('57014'), '57014'],
    ['too many connections (53300)', serverError('53300'), '53300'],
    ['a refused connection', systemError('ECONNREFUSED'), '08001'],
    ['a host that does not resolve', systemError('ENOTFOUND'), '08001'],
    ['a connection reset', systemError('ECONNRESET'), '08006'],
    ['a write to a closed socket', systemError('EPIPE'), '08006'],
    ['a connection lost mid-query', new Error('Connection terminated unexpectedly'), '08006'],
    [
      'a pool with no free connection',
      new Error('timeout exceeded when trying to connect'),
      '08001',
    ],
    [
      'every address of a host refusing',
      Object.assign(new AggregateError([systemError('ECONNREFUSED')], ''), {}),
      '08001',
    ],
  ])('%s is STORE_UNAVAILABLE, retryable, with its SQLSTATE', (_, error, sqlstate) => {
    const mapped = unavailable('waymark', error);
    expect(mapped).toMatchObject({
      code: 'STORE_UNAVAILABLE',
      retryable: true,
      details: { schema: 'waymark', sqlstate },
      cause: error,
    });
    expect(mapped.message).toMatch(/^STORE_UNAVAILABLE: PostgreSQL store \(schema "waymark"\): /);
  });

  it.each([
    ['a full disk (53100)', serverError('53100'), '53100'],
    ['a missing table (42P01)', serverError('42P01'), '42P01'],
    ['a value the column refuses (22P02)', serverError('22P02'), '22P02'],
    ['a pool that was ended', new Error('Cannot use a pool after calling end on the pool'), null],
    ['anything else', new TypeError('what'), null],
  ])('%s is STORE_UNAVAILABLE, not retryable', (_, error, sqlstate) => {
    expect(unavailable('waymark', error)).toMatchObject({
      code: 'STORE_UNAVAILABLE',
      retryable: false,
      details: { sqlstate },
    });
  });

  it('a WaymarkError passes through as it is', () => {
    const error = new WaymarkError('RUN_NOT_FOUND', 'there is no run "r1"', { retryable: false });
    expect(unavailable('waymark', error)).toBe(error);
  });

  it('a 5-letter Node.js code is not mistaken for a SQLSTATE', () => {
    expect(sqlstateOf(systemError('EPIPE'))).toBe('08006');
    expect(sqlstateOf(serverError('EPIPE'))).toBe('EPIPE');
  });
});

describe('the schema name', () => {
  it('is quoted once checked', () => {
    expect(quoteSchema('waymark')).toBe('"waymark"');
    expect(quoteSchema('runs_2')).toBe('"runs_2"');
  });

  it.each(['', 'Runs', '2runs', 'a-b', 'a"b', 'pg_catalog', 'a'.repeat(64), 42])(
    'refuses %j with OPTIONS_INVALID',
    (name) => {
      expect(() => quoteSchema(name)).toThrow(expect.objectContaining({ code: 'OPTIONS_INVALID' }));
    },
  );
});
