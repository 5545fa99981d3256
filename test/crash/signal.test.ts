import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/sqlite.js';
import { buildSrc, root, startChild } from './harness.js';

// A signal survives the death of the process hosting its run: real worker processes on one
// SQLite file, SIGKILLed between a kept signal's arrival and its delivery to the wait that
// opened, and right after that delivery, before its answer is stepped. After a restart (which
// sends the signal again, as a webhook retries) the signal is consumed once and the node after
// the event runs once.

const child = join(root, 'test/crash/signal-child.mjs');
let work: string;
let build: string;

beforeAll(() => {
  ({ work, build } = buildSrc('signal'));
}, 120_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

const logged = (log: string, what: string) =>
  readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith(`${what} `));

describe('an event node and the SIGKILL of its run host', () => {
  it.each(['die-before-consume', 'die-after-consume'])(
    'killed %s: the signal is consumed once, and the node after it runs once',
    async (mode) => {
      const db = join(work, `${mode}.db`);
      const log = join(work, `${mode}.log`);
      const first = startChild(child, [build, db, log, 'r', mode]);
      expect((await first.exit).signal).toBe('SIGKILL');
      expect(logged(log, 'last')).toEqual([]);

      const second = startChild(child, [build, db, log, 'r', 'normal']);
      const ended = await second.exit;
      expect(ended.code, second.stderr()).toBe(0);
      const store = new SqliteStore({ path: db });
      try {
        const events = (await store.events('r')).map(
          (e) => JSON.parse(e.event) as { type: string; activation?: string },
        );
        expect(events.filter((e) => e.type === 'answered')).toHaveLength(1);
        expect(logged(log, 'first')).toHaveLength(1);
        expect(logged(log, 'last')).toHaveLength(1);
        expect((await store.getRun('r'))?.status).toBe('succeeded');
        const signals = await store.listSignals();
        expect(signals).toMatchObject([{ id: 'sig-1', consumedRun: 'r' }]);
      } finally {
        await store.close();
      }
    },
    60_000,
  );
});
