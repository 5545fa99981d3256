import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/sqlite.js';
import { buildSrc, root, startChild } from './harness.js';

// A timer survives the death of the process hosting its run: real worker processes on one
// SQLite file, SIGKILLed once a sleep (or a node's notBefore) is due, right before the commit
// that wakes it and right after it, before the node that follows starts. After a restart the
// wake is recorded once and the node after it runs once.

const child = join(root, 'test/crash/wake-child.mjs');
let work: string;
let build: string;

beforeAll(() => {
  ({ work, build } = buildSrc('wake'));
}, 120_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

const logged = (log: string, what: string) =>
  readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith(`${what} `));

describe.each([
  ['a sleep node', 'nap', 'nap:1'],
  ["a node's notBefore", 'later', 'last:1'],
])('%s and the SIGKILL of its run host', (_what, which, sleeper) => {
  it.each(['die-before-wake', 'die-after-wake'])(
    'killed %s: woken once, and the node after it runs once',
    async (mode) => {
      const db = join(work, `${which}-${mode}.db`);
      const log = join(work, `${which}-${mode}.log`);
      const first = startChild(child, [build, db, log, 'r', which, mode]);
      expect((await first.exit).signal).toBe('SIGKILL');
      expect(logged(log, 'last')).toEqual([]);

      const second = startChild(child, [build, db, log, 'r', which, 'normal']);
      const ended = await second.exit;
      expect(ended.code, second.stderr()).toBe(0);
      const store = new SqliteStore({ path: db });
      try {
        const events = (await store.events('r')).map(
          (e) => JSON.parse(e.event) as { type: string; activation?: string; update?: unknown },
        );
        const wakes = events.filter(
          (e) => e.type === 'completed' && e.activation === sleeper && e.update === undefined,
        );
        expect(wakes).toHaveLength(1);
        expect(logged(log, 'first')).toHaveLength(1);
        expect(logged(log, 'last')).toHaveLength(1);
        expect((await store.getRun('r'))?.status).toBe('succeeded');
        expect(await store.listTimers('r')).toEqual([]);
      } finally {
        await store.close();
      }
    },
    60_000,
  );
});
