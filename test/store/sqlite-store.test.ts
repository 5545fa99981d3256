import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/sqlite.js';
import { migrations, schemaVersion } from '../../src/store/internal/schema.js';
import { storeFormatVersion } from '../../src/store/store.js';
import {
  commitSteps,
  sampleRun as newRun,
  sampleCommit as step,
  storeConformance,
} from '../../src/testing/index.js';

interface Racer {
  /** Settles once the racer has opened its store. */
  readonly ready: Promise<void>;
  go(): void;
  readonly result: Promise<{ name: string; won: number[] }>;
}

/** Starts test/store/fixtures/commit-racer.ts in its own process. */
function startRacer(path: string, runId: string, target: number, name: string): Racer {
  const script = fileURLToPath(new URL('./fixtures/commit-racer.ts', import.meta.url));
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', script, path, runId, `${target}`, name],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  let out = '';
  let announce: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    announce = resolve;
  });
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    if (out.startsWith('ready\n')) announce();
  });
  const result = new Promise<{ name: string; won: number[] }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`racer ${name} exited with ${code}: ${out}`));
      else resolve(JSON.parse(out.slice('ready\n'.length)));
    });
  });
  return {
    ready: Promise.race([ready, result.then(() => {})]),
    go: () => child.stdin.end('go\n'),
    result,
  };
}

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'waymark-sqlite-'));
}

storeConformance(
  'SqliteStore',
  async () => {
    const dir = tempDir();
    const store = new SqliteStore({ path: join(dir, 'waymark.db') });
    return {
      store,
      cleanup: async () => {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  { describe, it, beforeEach, afterEach, expect },
);

describe('SqliteStore on a file', () => {
  let dir: string;
  let path: string;
  const opened: { close(): unknown }[] = [];

  /** A store on this test's file; closed after the test. */
  function open(options: { synchronous?: 'normal' | 'full' } = {}): SqliteStore {
    const store = new SqliteStore({ path, ...options });
    opened.push(store);
    return store;
  }

  /** A raw connection to the same file, to look at or damage what the store wrote. */
  function raw(): Database.Database {
    const db = new Database(path);
    opened.push(db);
    return db;
  }

  beforeEach(() => {
    dir = tempDir();
    path = join(dir, 'runs', 'waymark.db');
  });
  afterEach(async () => {
    for (const handle of opened.splice(0).reverse()) await handle.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('concurrency between connections', () => {
    it('two stores on one file committing the same seq: one succeeds, the other gets STORE_CONFLICT', async () => {
      const first = open();
      const second = open();
      await first.createRun(newRun('r1'));
      expect((await second.getRun('r1'))?.seq).toBe(0);

      await first.commit('r1', step(1, { event: '"first"' }));
      await expect(second.commit('r1', step(1, { event: '"second"' }))).rejects.toMatchObject({
        code: 'STORE_CONFLICT',
        details: { current: 1, attempted: 1 },
      });
      expect((await first.events('r1')).map((e) => e.event)).toEqual(['"first"']);
    });

    it('processes racing to commit one run each store a different seq, and history has no gaps', async () => {
      const store = open();
      await store.createRun(newRun('r1'));
      const target = 300;
      const racers = ['a', 'b', 'c'].map((name) => startRacer(path, 'r1', target, name));
      await Promise.all(racers.map((r) => r.ready));
      for (const r of racers) r.go();
      const results = await Promise.all(racers.map((r) => r.result));

      const won = results.flatMap((r) => r.won).sort((x, y) => x - y);
      expect(won).toEqual(Array.from({ length: target }, (_, i) => i + 1));
      const events = await store.events('r1');
      expect(events.map((e) => e.seq)).toEqual(won);
      for (const { name, won: seqs } of results) {
        const mine = events.filter((e) => (JSON.parse(e.event) as { by: string }).by === name);
        expect(mine.map((e) => e.seq)).toEqual(seqs);
      }
    }, 60_000);
  });

  describe('a store that cannot be used right now', () => {
    it('a commit that waits past busyTimeoutMs for another writer fails with STORE_UNAVAILABLE, retryable, writing nothing', async () => {
      const store = new SqliteStore({ path, busyTimeoutMs: 50 });
      opened.push(store);
      await store.createRun(newRun('r1'));
      const other = raw();
      other.prepare('BEGIN IMMEDIATE').run();

      const refused = await store.commit('r1', step(1)).then(
        () => undefined,
        (e: unknown) => e,
      );

      expect(refused).toMatchObject({
        code: 'STORE_UNAVAILABLE',
        retryable: true,
        details: { sqlite: 'SQLITE_BUSY' },
      });
      other.prepare('ROLLBACK').run();
      expect((await store.getRun('r1'))?.seq).toBe(0);
      await store.commit('r1', step(1));
      expect((await store.getRun('r1'))?.seq).toBe(1);
    });

    it('rejects a busyTimeoutMs that is not a whole number >= 0 with OPTIONS_INVALID', () => {
      expect(() => new SqliteStore({ path, busyTimeoutMs: -1 })).toThrow(
        expect.objectContaining({ code: 'OPTIONS_INVALID' }),
      );
    });
  });

  describe('atomic writes', () => {
    it('a commit that fails halfway leaves nothing of it behind', async () => {
      const store = open();
      await store.createRun(newRun('r1'));
      // Row 0 stops being the head before row 1 is inserted; row 1's CHECK (an event) fails.
      const broken = step(1, { event: null as unknown as string, status: 'failed' });
      await expect(store.commit('r1', broken)).rejects.toThrow(
        /CHECK constraint failed: event_in_every_row_but_the_first/,
      );
      expect(await store.getRun('r1')).toMatchObject({ seq: 0, status: 'running' });
      await store.commit('r1', step(1));
      expect((await store.events('r1')).map((e) => e.seq)).toEqual([1]);
    });

    it('a run whose first snapshot cannot be written is not created', async () => {
      const store = open();
      await expect(
        store.createRun(newRun('r1', { snapshot: null as unknown as string })),
      ).rejects.toThrow(/NOT NULL/);
      expect(await store.getRun('r1')).toBeUndefined();
    });
  });

  describe('corrupt rows', () => {
    let store: SqliteStore;

    beforeEach(async () => {
      store = open();
      for (const id of ['bad', 'good']) {
        await store.createRun(newRun(id));
        await commitSteps(store, id, 1, 4, [2]);
      }
    });

    /**
     * SQL for the key of run `runId`'s event at `seq` (schema version 3): its run number in the
     * high 32 bits. The newest row, here seq 4, is the run's head: it holds the run's status.
     */
    function key(runId: string, seq: number): string {
      return `((SELECT num FROM runs WHERE id = '${runId}') << 32) + ${seq}`;
    }

    async function expectOnlyBadCorrupt(pattern: RegExp): Promise<void> {
      await expect(store.loadRun('bad')).rejects.toMatchObject({
        code: 'STORE_CORRUPT',
        message: expect.stringMatching(pattern),
        details: expect.objectContaining({ runId: 'bad' }),
      });
      const good = await store.loadRun('good');
      expect(good?.snapshot.seq).toBe(2);
      expect(good?.events.map((e) => e.seq)).toEqual([3, 4]);
    }

    it('a snapshot whose data is not text fails that run with STORE_CORRUPT; other runs load', async () => {
      raw().prepare("UPDATE snapshots SET data = x'00ff' WHERE run_id = 'bad' AND seq = 2").run();
      await expectOnlyBadCorrupt(/run "bad".*snapshots row at seq 2 .*column data, expected text/);
    });

    it('an event with garbage in a column fails that run with STORE_CORRUPT; other runs load', async () => {
      raw()
        .prepare(`UPDATE events SET at = 'yesterday' WHERE key = ${key('bad', 3)}`)
        .run();
      await expectOnlyBadCorrupt(/run "bad".*events row at seq 3 .*column at/);
      await expect(store.events('bad')).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
      expect(await store.events('good')).toHaveLength(4);
    });

    it('a missing event (a gap in the seqs) fails that run with STORE_CORRUPT; other runs load', async () => {
      raw()
        .prepare(`DELETE FROM events WHERE key = ${key('bad', 3)}`)
        .run();
      await expectOnlyBadCorrupt(/run "bad".*events jump from seq 2 to seq 4/);
    });

    it('events missing at the end of a run fail that run with STORE_CORRUPT', async () => {
      raw()
        .prepare(`DELETE FROM events WHERE key = ${key('bad', 4)}`)
        .run();
      await expectOnlyBadCorrupt(/run "bad".*no row of its history holds its status/);
      await expect(store.getRun('bad')).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
      await expect(store.commit('bad', step(4))).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
    });

    it('a run with no snapshot at all fails with STORE_CORRUPT', async () => {
      raw().prepare("DELETE FROM snapshots WHERE run_id = 'bad'").run();
      await expectOnlyBadCorrupt(/run "bad".*no snapshot/);
    });

    it('a run row with an unknown status fails that run with STORE_CORRUPT, in get and load alike', async () => {
      raw()
        .prepare(`UPDATE events SET status = 'sleeping' WHERE key = ${key('bad', 4)}`)
        .run();
      await expectOnlyBadCorrupt(/run "bad".*events row at seq 4 .*"sleeping" in column status/);
      await expect(store.getRun('bad')).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
      await expect(store.commit('bad', step(5))).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
    });

    it('a run row that cannot be read is left out of listings, which still list every other run', async () => {
      raw()
        .prepare(`UPDATE events SET status = 'sleeping' WHERE key = ${key('bad', 4)}`)
        .run();
      expect((await store.listRuns()).map((r) => r.id)).toEqual(['good']);
      await expect(store.loadRun('bad')).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
    });

    it('a run written in a newer store format is listed but refuses to load with STORE_VERSION_UNSUPPORTED', async () => {
      raw().prepare("UPDATE runs SET format = 99 WHERE id = 'bad'").run();
      await expect(store.loadRun('bad')).rejects.toMatchObject({
        code: 'STORE_VERSION_UNSUPPORTED',
        message: expect.stringMatching(
          new RegExp(
            `run "bad".*store format 99, newer than this waymark reads \\(${storeFormatVersion}\\)`,
          ),
        ),
      });
      expect((await store.loadRun('good'))?.snapshot.seq).toBe(2);
      expect((await store.getRun('bad'))?.format).toBe(99);
      expect((await store.listRuns()).map((r) => r.id).sort()).toEqual(['bad', 'good']);
    });

    it('a stray event past the run seq makes the next commit fail with STORE_CORRUPT, writing nothing', async () => {
      raw()
        .prepare(`INSERT INTO events (key, at, event) VALUES (${key('bad', 5)}, 0, '{}')`)
        .run();
      await expect(store.commit('bad', step(5))).rejects.toMatchObject({
        code: 'STORE_CORRUPT',
        message: expect.stringMatching(/run "bad".*already has rows at seq 5, past its seq 4/),
      });
      expect((await store.getRun('bad'))?.seq).toBe(4);
      await store.commit('good', step(5));
    });

    it('the corrupt run can still be inspected by its usage, and the good run still commits', async () => {
      raw().prepare("UPDATE snapshots SET data = x'00ff' WHERE run_id = 'bad' AND seq = 2").run();
      expect((await store.usage('bad')).snapshots).toBe(2);
      await store.commit('good', step(5, { status: 'succeeded', snapshot: '{}' }));
      expect((await store.loadRun('good'))?.run.status).toBe('succeeded');
    });
  });

  describe('durability and the file', () => {
    it('reopening the file keeps every run, event, snapshot, effect, wait and memo', async () => {
      const first = open();
      await first.createRun(newRun('r1'));
      await commitSteps(first, 'r1', 1, 5, [4]);
      await first.recordEffect({ runId: 'r1', key: 'k', result: '"sent"', at: 9 });
      await first.openWait({
        runId: 'r1',
        requestId: 'q1',
        node: 'approve',
        activation: 'approve:1',
        request: '{}',
        openedAt: 10,
        answer: null,
        answeredBy: null,
        answeredAt: null,
      });
      await first.answerWait('r1', 'q1', '"yes"', 'ana', 11);
      await first.putMemo({
        graph: 'claims',
        node: 'search',
        nodeVersion: 1,
        inputHash: 'h',
        output: '"out"',
        runId: 'r1',
        activation: 'search:1',
        at: 12,
      });
      const before = {
        loaded: await first.loadRun('r1'),
        events: await first.events('r1'),
        usage: await first.usage('r1'),
        waits: await first.listWaits('r1'),
      };
      await first.close();

      const again = open();
      expect(await again.loadRun('r1')).toEqual(before.loaded);
      expect(await again.events('r1')).toEqual(before.events);
      expect(await again.usage('r1')).toEqual(before.usage);
      expect(await again.listWaits('r1')).toEqual(before.waits);
      expect(await again.getEffect('r1', 'k')).toMatchObject({ result: '"sent"' });
      expect(await again.findMemo('claims', 'search', 1, 'h')).toMatchObject({ output: '"out"' });
      await again.commit('r1', step(6));
      expect((await again.getRun('r1'))?.seq).toBe(6);
    });

    it('records the schema version in a table, once, and reopening does not migrate again', async () => {
      await open().close();
      await open().close();
      const rows = raw().prepare('SELECT version FROM schema_version ORDER BY version').all();
      expect(rows).toEqual(Array.from({ length: schemaVersion }, (_, i) => ({ version: i + 1 })));
    });

    it('brings a file written at schema version 6 forward with a table of memory items, keeping its runs', async () => {
      mkdirSync(join(dir, 'runs'));
      const db = new Database(path);
      for (const migration of migrations.slice(0, 6)) db.exec(migration);
      db.exec(
        'CREATE TABLE schema_version (version INTEGER NOT NULL PRIMARY KEY, applied_at INTEGER NOT NULL)',
      );
      db.prepare(
        'INSERT INTO schema_version (version, applied_at) VALUES (1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (6, 0)',
      ).run();
      db.close();
      const before = open();
      await before.createRun(newRun('r1'));
      await before.putItem({ namespace: ['users', 'u1'], key: 'prefs', value: '{"theme":"dark"}' });
      await before.close();
      const store = open();
      expect(await store.getRun('r1')).toMatchObject({ id: 'r1' });
      expect(await store.getItem(['users', 'u1'], 'prefs')).toMatchObject({
        value: '{"theme":"dark"}',
      });
      await store.close();
    });

    it('brings a file written at schema version 1 forward, keeping its runs (which have no labels)', async () => {
      mkdirSync(join(dir, 'runs'));
      const db = new Database(path);
      db.exec(migrations[0]!);
      db.exec(
        'CREATE TABLE schema_version (version INTEGER NOT NULL PRIMARY KEY, applied_at INTEGER NOT NULL)',
      );
      db.prepare('INSERT INTO schema_version (version, applied_at) VALUES (1, 0)').run();
      db.prepare(
        `INSERT INTO runs (id, graph, graph_hash, graph_version, state_version, format, status, seq, created_at, updated_at, error)
         VALUES ('old', 'claims', 'h', 1, 1, 1, 'running', 0, 5, 5, NULL)`,
      ).run();
      db.prepare("INSERT INTO snapshots (run_id, seq, data) VALUES ('old', 0, '{}')").run();
      db.close();

      const store = open();
      expect(await store.getRun('old')).toMatchObject({ id: 'old', labels: null });
      await store.createRun(newRun('new', { labels: '{"file":"g.ts"}' }));
      expect((await store.getRun('new'))?.labels).toBe('{"file":"g.ts"}');
      await store.close();
    });

    it('brings a file written at schema version 2 forward to one key per event, keeping every run as it was', async () => {
      mkdirSync(join(dir, 'runs'));
      const db = new Database(path);
      db.exec(migrations[0]!);
      db.exec(migrations[1]!);
      db.exec(
        'CREATE TABLE schema_version (version INTEGER NOT NULL PRIMARY KEY, applied_at INTEGER NOT NULL)',
      );
      db.prepare('INSERT INTO schema_version (version, applied_at) VALUES (1, 0), (2, 0)').run();
      const insertRun = db.prepare(
        `INSERT INTO runs (id, graph, graph_hash, graph_version, state_version, format, status, seq, created_at, updated_at, error, labels)
         VALUES (?, 'claims', 'h', 1, 1, 1, ?, ?, ?, ?, ?, ?)`,
      );
      // As version 2 wrote them: a run's updated_at is the time of its last event.
      insertRun.run('waiting', 'waiting', 3, 5, 8, null, '{"graphFile":"g.ts"}');
      insertRun.run('failed', 'failed', 2, 6, 8, '{"code":"NODE_FAILED"}', null);
      insertRun.run('fresh', 'running', 0, 4, 4, null, null);
      insertRun.run('lost', 'running', 3, 3, 9, null, null); // its event 3 is missing
      const insertEvent = db.prepare(
        'INSERT INTO events (run_id, seq, at, event, trace) VALUES (?, ?, ?, ?, ?)',
      );
      for (const seq of [1, 2, 3]) insertEvent.run('waiting', seq, 5 + seq, `{"n":${seq}}`, null);
      for (const seq of [1, 2]) insertEvent.run('failed', seq, 6 + seq, `{"f":${seq}}`, '[1]');
      for (const seq of [1, 2]) insertEvent.run('lost', seq, 6 + seq, '{}', null);
      const insertSnapshot = db.prepare(
        'INSERT INTO snapshots (run_id, seq, data) VALUES (?, ?, ?)',
      );
      insertSnapshot.run('waiting', 0, '{"at":0}');
      insertSnapshot.run('waiting', 2, '{"at":2}');
      insertSnapshot.run('failed', 0, '{"at":0}');
      insertSnapshot.run('failed', 2, '{"at":2}');
      insertSnapshot.run('fresh', 0, '{"at":0}');
      insertSnapshot.run('lost', 0, '{"at":0}');
      db.prepare(
        `INSERT INTO effects (run_id, key, result, at) VALUES ('waiting', 'k', '"sent"', 6)`,
      ).run();
      db.close();

      const store = open();
      expect(await store.getRun('waiting')).toEqual({
        id: 'waiting',
        graph: 'claims',
        graphHash: 'h',
        graphVersion: 1,
        stateVersion: 1,
        format: 1,
        status: 'waiting',
        seq: 3,
        createdAt: 5,
        updatedAt: 8,
        error: null,
        labels: '{"graphFile":"g.ts"}',
        lease: null,
      });
      expect(await store.getRun('failed')).toMatchObject({
        status: 'failed',
        seq: 2,
        updatedAt: 8,
        error: '{"code":"NODE_FAILED"}',
      });
      expect(await store.loadRun('waiting')).toMatchObject({
        snapshot: { seq: 2, data: '{"at":2}' },
        events: [{ seq: 3, at: 8, event: '{"n":3}', trace: null }],
      });
      expect(await store.events('failed')).toEqual([
        { seq: 1, at: 7, event: '{"f":1}', trace: '[1]' },
        { seq: 2, at: 8, event: '{"f":2}', trace: '[1]' },
      ]);
      expect((await store.listRuns({ status: 'failed' })).map((r) => r.id)).toEqual(['failed']);
      expect(await store.getRun('fresh')).toMatchObject({
        status: 'running',
        seq: 0,
        updatedAt: 4,
      });
      // Version 2 knew this run was at seq 3; with its event 3 gone it has no head now.
      await expect(store.loadRun('lost')).rejects.toMatchObject({
        code: 'STORE_CORRUPT',
        message: expect.stringMatching(/no row of its history holds its status/),
      });
      expect((await store.listRuns()).map((r) => r.id).sort()).toEqual([
        'failed',
        'fresh',
        'waiting',
      ]);
      expect(await store.usage('waiting')).toMatchObject({ events: 3, snapshots: 2 });
      expect(await store.getEffect('waiting', 'k')).toMatchObject({ result: '"sent"' });

      await store.commit('waiting', step(4, { status: 'succeeded', snapshot: '{"at":4}' }));
      await expect(store.commit('failed', step(2))).rejects.toMatchObject({
        code: 'STORE_CONFLICT',
      });
      await commitSteps(store, 'fresh', 1, 1);
      await store.createRun(newRun('new'));
      await commitSteps(store, 'new', 1, 2);
      expect((await store.events('new')).map((e) => e.seq)).toEqual([1, 2]);
      expect((await store.events('waiting')).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
      expect((await store.getRun('waiting'))?.status).toBe('succeeded');
    });

    it('a step writes about one page to the write-ahead log: its event and its head share a leaf', async () => {
      const store = open();
      await store.createRun(newRun('other'));
      await store.createRun(newRun('r1'));
      await commitSteps(store, 'other', 1, 5);
      // Fold what is there into the file, so the log counts only the frames of the steps below.
      expect(raw().pragma('wal_checkpoint(TRUNCATE)')).toEqual([
        { busy: 0, log: 0, checkpointed: 0 },
      ]);
      const steps = 250; // fewer pages than SQLite's automatic checkpoint (1,000) would fold
      await commitSteps(store, 'r1', 1, steps);
      const [{ log }] = raw().pragma('wal_checkpoint(PASSIVE)') as [{ log: number }];
      // Three pages per step before schema version 3 (run row, event row, event index).
      expect(log / steps).toBeLessThan(1.5);
    });

    it('a commit past the last seq a run can hold fails with STORE_LIMIT, writing nothing', async () => {
      const store = open();
      await store.createRun(newRun('r1'));
      await expect(store.commit('r1', step(2 ** 32))).rejects.toMatchObject({
        code: 'STORE_LIMIT',
        retryable: false,
        details: { runId: 'r1', attempted: 2 ** 32, limit: 2 ** 32 - 1 },
      });
      expect((await store.getRun('r1'))?.seq).toBe(0);
    });

    it('refuses a file whose schema version is newer than this waymark, and leaves it untouched', async () => {
      await open().close();
      raw()
        .prepare('INSERT INTO schema_version (version, applied_at) VALUES (?, 0)')
        .run(schemaVersion + 1);
      expect(() => open()).toThrow(
        expect.objectContaining({
          code: 'STORE_VERSION_UNSUPPORTED',
          message: expect.stringContaining(
            `database schema version ${schemaVersion + 1} is newer than this waymark (${schemaVersion})`,
          ),
        }),
      );
      expect(raw().prepare('SELECT max(version) AS v FROM schema_version').get()).toEqual({
        v: schemaVersion + 1,
      });
    });

    it('refuses a file that is not a SQLite database with STORE_CORRUPT', () => {
      rmSync(dir, { recursive: true, force: true });
      dir = tempDir();
      path = join(dir, 'notes.db');
      writeFileSync(path, 'these are not the rows you are looking for\n'.repeat(100));
      expect(() => open()).toThrow(expect.objectContaining({ code: 'STORE_CORRUPT' }));
    });

    it('uses WAL with synchronous NORMAL by default, and FULL when asked', () => {
      expect(open().settings()).toEqual({ journalMode: 'wal', synchronous: 'normal' });
      expect(open({ synchronous: 'full' }).settings()).toEqual({
        journalMode: 'wal',
        synchronous: 'full',
      });
      expect(raw().pragma('journal_mode', { simple: true })).toBe('wal');
    });

    it('rejects an unknown synchronous level with OPTIONS_INVALID', () => {
      expect(() => open({ synchronous: 'off' as 'full' })).toThrow(
        expect.objectContaining({ code: 'OPTIONS_INVALID' }),
      );
    });

    it('a path given alone as a string is the file the store opens, not the default one', async () => {
      const cwd = process.cwd();
      process.chdir(dir);
      let store: SqliteStore;
      try {
        store = new SqliteStore('file.db'); // relative: resolved against the cwd, now
      } finally {
        process.chdir(cwd);
      }
      opened.push(store);
      await store.createRun(newRun('r1'));
      await store.commit('r1', step(1));

      path = join(realpathSync(dir), 'file.db');
      expect(store.path).toBe(path);
      expect(raw().prepare('SELECT id FROM runs').all()).toEqual([{ id: 'r1' }]);
      expect(existsSync(join(dir, '.waymark'))).toBe(false);
    });

    it.each([
      ['a number', 42],
      ['null', null],
      ['true', true],
      ['an array', [path]],
      ['an empty path', ''],
      ['an options object whose path is not a string', { path: 42 }],
      ['an options object whose path is empty', { path: '' }],
    ])('refuses %s as its argument with OPTIONS_INVALID, creating no file', (_, argument) => {
      // In the test's directory: an argument read as "no options" would create the default file here.
      const cwd = process.cwd();
      process.chdir(dir);
      try {
        expect(() => new SqliteStore(argument as never)).toThrow(
          expect.objectContaining({ code: 'OPTIONS_INVALID' }),
        );
      } finally {
        process.chdir(cwd);
      }
      expect(readdirSync(dir)).toEqual([]);
    });

    it("with path ':memory:', keeps a private database and writes no file", async () => {
      const store = new SqliteStore({ path: ':memory:' });
      opened.push(store);
      await store.createRun(newRun('r1'));
      await store.commit('r1', step(1));
      expect((await store.loadRun('r1'))?.events).toHaveLength(1);
      expect(existsSync(join(process.cwd(), ':memory:'))).toBe(false);
    });

    it('without a path, keeps its file at .waymark/waymark.db under the current directory', async () => {
      const cwd = process.cwd();
      process.chdir(dir);
      let store: SqliteStore;
      try {
        store = new SqliteStore(); // resolves its path now, so cwd can be restored at once
      } finally {
        process.chdir(cwd);
      }
      opened.push(store);
      const expected = join(realpathSync(dir), '.waymark', 'waymark.db');
      expect(store.path).toBe(expected);
      await store.createRun(newRun('r1'));
      expect(existsSync(expected)).toBe(true);
    });
  });
});
