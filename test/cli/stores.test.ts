// The command is the same on both stores: one session of ls, show, trace, approve, answer,
// resume, cancel and rewind, played against a SQLite file and against a PostgreSQL schema,
// prints the same --json lines (times, durations, the location itself and the wording of an
// error aside) and exits alike.
import { describe, expect, it } from 'vitest';
import { dropSchema, pgUrl, schemaName, skipReason, testPool } from '../store/fixtures/postgres.js';
import { fixture, type JsonLine, jsonLines, sandbox, testTimeoutMs } from './support.js';

interface Played {
  readonly command: string;
  readonly code: number;
  readonly lines: unknown[];
}

/** The session, on the store at `location`, in a sandbox of its own. */
async function play(location: string): Promise<Played[]> {
  const box = sandbox();
  const played: Played[] = [];
  const call = async (args: string[], env: Record<string, string> = {}) => {
    const out = await box.waymark(['--store', location, '--json', ...args], { env, noDb: true });
    played.push({
      command: args.join(' '),
      code: out.code,
      lines: jsonLines(out).map((line) => normalised(comparable(line as JsonLine), location)),
    });
  };
  const review = fixture('review.ts');
  await call(['ls']);
  await call(['run', review, '--input', '{"title":"T"}', '--run-id', 'w']);
  await call(['approve', 'w', '--by', 'ed', '--note', 'tighter']);
  await call(['show', 'w']);
  await call(['answer', 'w', '--value', '{"stars":4}', '--by', 'ed']);
  await call(['run', fixture('flaky.ts'), '--run-id', 'f'], { FIXTURE_FAIL: '1' });
  await call(['show', 'f']);
  await call(['resume', 'f']);
  await call(['trace', 'f']);
  await call(['rewind', 'f', '--to', 'work', '--run-id', 'f2']);
  await call(['run', review, '--input', '{"title":"U"}', '--run-id', 'x']);
  await call(['cancel', 'x']);
  await call(['resume', 'x']);
  await call(['show', 'nope']);
  await call(['ls']);
  return played;
}

/**
 * An error line by its contract (code and details): its message and hint say where, in the
 * words of a file or of a database, and must only be there.
 */
function comparable(line: JsonLine): unknown {
  if (line.type !== 'error') return line;
  expect(line).toMatchObject({ message: expect.any(String), hint: expect.any(String) });
  const { message: _message, hint: _hint, ...contract } = line;
  return contract;
}

/** A line with what differs by nature between two sessions (times, durations, processes, deep stack frames, where) taken out. */
function normalised(value: unknown, location: string, key = ''): unknown {
  // The process that last held the run's lease: one of each session's own.
  if (key === 'owner' || key === 'pid') return `<${key}>`;
  // Which frames a stack shows below the node's own depends on when the store's I/O settled.
  if (key === 'stack' && typeof value === 'string') return value.split('\n')[0];
  if (typeof value === 'string') {
    if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(value)) return '<time>';
    return value.split(location).join('<store>');
  }
  if (typeof value === 'number' && /(Ms|At|ms)$/.test(key)) return '<number>';
  if (Array.isArray(value)) return value.map((v) => normalised(v, location, key));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, normalised(v, location, k)]),
    );
  }
  return value;
}

describe('the same commands on SQLite and on PostgreSQL', () => {
  it.skipIf(skipReason !== undefined && process.env.CI !== 'true')(
    'print the same lines and exit with the same codes',
    { timeout: testTimeoutMs * 3 },
    async () => {
      const schema = schemaName();
      const pool = testPool();
      try {
        const onPostgres = `${pgUrl}${pgUrl.includes('?') ? '&' : '?'}schema=${schema}`;
        const [sqlite, postgres] = await Promise.all([
          play(`${sandbox().dir}/runs.db`),
          play(onPostgres),
        ]);
        expect(postgres.map((p) => [p.command, p.code])).toEqual(
          sqlite.map((p) => [p.command, p.code]),
        );
        // The session did what it says: a location that holds nothing yet is not made by
        // listing it, a run answered to its end, a failure resumed, a rewind from it, a
        // cancelled run that does not resume, a missing one refused.
        expect(sqlite.map((p) => p.code)).toEqual([2, 3, 3, 0, 0, 1, 0, 0, 0, 0, 3, 0, 2, 2, 0]);
        for (const [i, played] of postgres.entries()) {
          expect(played.lines, played.command).toEqual(sqlite[i]?.lines);
        }
      } finally {
        await dropSchema(pool, schema);
        await pool.end();
      }
    },
  );
});
