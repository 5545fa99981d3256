import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/sqlite.js';
import { buildSrc, type ChildExit, random, root, sleep, startChild } from './harness.js';

// Effects under real crashes: child processes publish posts to a local HTTP receiver through
// ctx.effect and are SIGKILLed, at seeded random moments, by the receiver itself right after it
// accepted a post and before its answer leaves (so the child's ledger never records it), or
// right after the ledger recorded a post and before the activation completed. The receiver
// dedupes on the Idempotency-Key header, as a real CMS or payment API does: every intent must
// end up as exactly one post. Seeded, so a failure replays:
// WAYMARK_CRASH_SEED=<seed> npx vitest run test/crash/publish.test.ts
const seed = Number(process.env.WAYMARK_CRASH_SEED ?? 20_261_130);
const targetKills = 50;
const targetAcceptKills = 12;

const child = join(root, 'test/crash/publish-child.mjs');
let work: string;
let build: string;

beforeAll(() => {
  ({ work, build } = buildSrc('publish'));
}, 120_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

/** What the child sends as the body of a post: the intent its key stands for. */
interface Intent {
  readonly runId: string;
  readonly index: number;
  readonly item: string;
  readonly intent: string;
}

interface Post extends Intent {
  readonly id: string;
  readonly key: string;
}

/** One request the receiver read in full. */
interface Call {
  readonly key: string;
  readonly pid: number;
  readonly intent: string;
  /** Whether this call created the post (else it returned the one the key already had). */
  readonly fresh: boolean;
}

/** `run-0003 2 launch`: an intent as one comparable string. */
const intentId = (i: Pick<Intent, 'runId' | 'index' | 'item'>) => `${i.runId} ${i.index} ${i.item}`;

/**
 * A tiny CMS on 127.0.0.1: `POST /posts` with an `Idempotency-Key` header creates a post, or
 * returns the post the key already has and creates nothing. It counts raw calls, remembers
 * every body each key carried, notes any call for a key the run's ledger had recorded already
 * (the ledger should have answered it), and can SIGKILL a child it was told about at its n-th
 * call, after accepting it and before answering.
 */
class Receiver {
  readonly calls: Call[] = [];
  readonly posts = new Map<string, Post>();
  /** Every distinct body a key carried; more than one would be two intents under one key. */
  readonly bodiesByKey = new Map<string, Set<string>>();
  /** Calls that arrived although the ledger held the key's result: the ledger was bypassed. */
  readonly callsAfterRecord: Call[] = [];
  readonly acceptKills: { pid: number; key: string; fresh: boolean }[] = [];
  readonly #plans = new Map<number, { killAt: number; calls: number; exit: Promise<ChildExit> }>();
  readonly #server: Server;
  readonly #db: string;
  readonly #delay: () => number;
  #ledger: Database.Database | undefined;
  url = '';

  /** `db` is the children's store, read to see what their ledger holds; `delay` paces answers. */
  constructor(db: string, delay: () => number) {
    this.#db = db;
    this.#delay = delay;
    this.#server = createServer((req, res) => {
      // A child killed mid-request leaves a broken socket; that is the point, not an error.
      req.on('error', () => {});
      res.on('error', () => {});
      if (req.method !== 'POST' || req.url !== '/posts') {
        res.writeHead(404).end();
        return;
      }
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => this.#accept(req.headers, Buffer.concat(chunks).toString(), res));
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.#ledger?.close();
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }

  /** Kills the child `pid` (started by this test) right after accepting its `n`-th call. */
  killAtCall(pid: number, n: number, exit: Promise<ChildExit>): void {
    this.#plans.set(pid, { killAt: n, calls: 0, exit });
    void exit.then(() => this.#plans.delete(pid));
  }

  #accept(
    headers: Record<string, string | string[] | undefined>,
    body: string,
    res: ServerResponse,
  ): void {
    const key = headers['idempotency-key'];
    const pid = Number(headers['x-child-pid']);
    let intent: Intent;
    try {
      intent = JSON.parse(body) as Intent;
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (typeof key !== 'string' || key === '') {
      res.writeHead(400).end();
      return;
    }
    const carried = this.bodiesByKey.get(key) ?? new Set();
    carried.add(body);
    this.bodiesByKey.set(key, carried);
    let post = this.posts.get(key);
    const fresh = post === undefined;
    if (post === undefined) {
      post = { id: `post-${this.posts.size + 1}`, key, ...intent };
      this.posts.set(key, post);
    }
    const call = { key, pid, intent: intentId(intent), fresh };
    this.calls.push(call);
    // The child opened the store before its first call, so the file exists by now.
    this.#ledger ??= new Database(this.#db, { readonly: true, fileMustExist: true });
    if (this.#ledger.prepare('SELECT 1 FROM effects WHERE key = ?').get(key) !== undefined)
      this.callsAfterRecord.push(call);
    const plan = this.#plans.get(pid);
    if (plan !== undefined && ++plan.calls === plan.killAt) {
      // Accepted and stored, never answered: the child dies before the response could reach
      // it, so its ledger cannot have recorded the result. The socket closes once it is dead.
      try {
        process.kill(pid, 'SIGKILL');
        this.acceptKills.push({ pid, key, fresh });
      } catch {
        // It died on its own already; its exit code tells the test what went wrong.
      }
      void plan.exit.then(() => res.destroy());
      return;
    }
    const answer = JSON.stringify(post);
    setTimeout(() => {
      if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
    }, this.#delay());
  }
}

/** The items of a run, as publish-child.mjs drafts them. */
function itemsOf(runId: string, shape: 'many' | 'one'): string[] {
  const titles = ['launch', 'pricing', 'roadmap', 'launch', 'faq'];
  return shape === 'one' ? ['launch'] : titles.slice(0, 2 + (Number(runId.slice(4)) % 4));
}

const runIdOf = (n: number) => `run-${String(n).padStart(4, '0')}`;

interface Options {
  readonly shape: 'many' | 'one';
  /** Stall (to be killed) once the n-th effect of the child has returned; 0: never. */
  readonly stallAfter?: number;
  /** Where the child appends a line per effect the ledger answered without a call. */
  readonly replays: string;
  /** Where the child writes every run's final state before exiting. */
  readonly states?: string;
}

function start(cms: Receiver, db: string, total: number, options: Options) {
  const args = [
    build,
    db,
    cms.url,
    String(total),
    options.shape,
    String(options.stallAfter ?? 0),
    options.replays,
  ];
  const c = startChild(child, options.states === undefined ? args : [...args, options.states]);
  const recorded = new Promise<void>((resolve) => {
    c.proc.stdout!.on('data', (d) => {
      if (String(d).includes('recorded')) resolve();
    });
  });
  return { ...c, recorded };
}

/** `run index pid` lines of the effects the ledger answered without calling the receiver. */
function readReplays(file: string): { runId: string; index: number; pid: number }[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const [runId, index, pid] = line.split(' ');
      return { runId: runId!, index: Number(index), pid: Number(pid) };
    });
}

interface FinalState {
  status: string;
  state: {
    items: string[];
    posts: { index: number; item: string; id: string }[];
    published: number;
  };
}

/** What the file holds: SQLite's own check, each run's status (as the store reads it), the ledger. */
async function readStore(db: string) {
  const sqlite = new Database(db, { readonly: true });
  const store = new SqliteStore({ path: db });
  try {
    return {
      integrity: sqlite.pragma('integrity_check', { simple: true }),
      runs: (await store.listRuns())
        .map(({ id, status }) => ({ id, status }))
        .sort((a, b) => a.id.localeCompare(b.id)),
      effects: sqlite.prepare('SELECT run_id, key, result FROM effects ORDER BY key').all() as {
        run_id: string;
        key: string;
        result: string;
      }[],
    };
  } finally {
    await store.close();
    sqlite.close();
  }
}

describe('effects under real crashes', () => {
  it(`publishes every intent exactly once after ${targetKills} SIGKILLs, ${targetAcceptKills} of them between the receiver's accept and the ledger's record`, async () => {
    const next = random(seed);
    const delays = random(seed ^ 0x5eed);
    const db = join(work, 'publish.db');
    const replays = join(work, 'replays.log');
    const states = join(work, 'states.json');
    const cms = new Receiver(db, () => Math.floor(delays() * 4));
    await cms.listen();
    const killed = new Set<number>();
    const kills = { timer: 0, afterRecord: 0 };
    let total = 10;
    let children: ChildProcess[] = [];
    try {
      while (killed.size < targetKills || cms.acceptKills.length < targetAcceptKills) {
        // A third of the children are killed by the receiver at their 1st to 6th call, after
        // it accepted the post and before it answers; one in five right after its 1st to 6th
        // effect was recorded, before the activation completed; the rest by a timer, anywhere
        // in their work (resuming, drafting, posting, recording, joining).
        const draw = next();
        const mode = draw < 0.35 ? 'accept' : draw < 0.55 ? 'record' : 'timer';
        const nth = 1 + Math.floor(next() * 6);
        const afterMs = Math.floor(next() * 250);
        const c = start(cms, db, total, {
          shape: 'many',
          stallAfter: mode === 'record' ? nth : 0,
          replays,
        });
        const pid = c.proc.pid!;
        children.push(c.proc);
        if (mode === 'accept') cms.killAtCall(pid, nth, c.exit);
        await c.ready;
        const kill =
          mode === 'timer'
            ? sleep(afterMs).then(() => 'timer' as const)
            : mode === 'record'
              ? c.recorded.then(() => 'record' as const)
              : new Promise<never>(() => {});
        const outcome = await Promise.race([kill, c.exit]);
        let exit: ChildExit;
        if (outcome === 'timer' || outcome === 'record') {
          c.proc.kill('SIGKILL');
          exit = await c.exit;
          if (exit.signal === 'SIGKILL') kills[outcome === 'timer' ? 'timer' : 'afterRecord']++;
        } else {
          exit = outcome;
        }
        if (exit.signal === 'SIGKILL') {
          killed.add(pid);
        } else {
          expect(exit.code, `a child failed (seed ${seed}):\n${c.stderr()}`).toBe(0);
          total += 4; // it finished everything before its kill came: give the next one more to do
        }
        children = children.filter((p) => p.exitCode === null && p.signalCode === null);
      }
      const last = start(cms, db, total, { shape: 'many', replays, states });
      const { code } = await last.exit;
      expect(code, `the final child failed (seed ${seed}):\n${last.stderr()}`).toBe(0);
    } finally {
      for (const p of children) p.kill('SIGKILL');
      await cms.close();
    }

    // Every intent of every run: one per (run, item), including the two `launch` items of a run.
    const intents = Array.from({ length: total }, (_, n) => runIdOf(n)).flatMap((runId) =>
      itemsOf(runId, 'many').map((item, index) => intentId({ runId, index, item })),
    );
    const keys = new Set(cms.calls.map((c) => c.key));
    const problems: string[] = [];

    // No key ever carried two intents, and each intent has exactly one key.
    for (const [key, carried] of cms.bodiesByKey) {
      if (carried.size !== 1) problems.push(`key ${key} carried ${[...carried].join(' | ')}`);
    }
    const keysOf = new Map<string, string[]>();
    for (const post of cms.posts.values()) {
      const intent = intentId(post);
      keysOf.set(intent, [...(keysOf.get(intent) ?? []), post.key]);
      if (!post.key.startsWith(`${post.runId}/`))
        problems.push(`key ${post.key} does not name its run ${post.runId}`);
    }
    for (const intent of intents) {
      const found = keysOf.get(intent) ?? [];
      if (found.length !== 1) problems.push(`${intent} has ${found.length} keys: ${found}`);
    }
    // A key was called again only because the process that called it died before recording
    // it: never once the ledger held its result, and at most once by a process that lived.
    for (const call of cms.callsAfterRecord)
      problems.push(`key ${call.key} was called by ${call.pid} after the ledger recorded it`);
    const callsOf = new Map<string, Call[]>();
    for (const call of cms.calls) callsOf.set(call.key, [...(callsOf.get(call.key) ?? []), call]);
    for (const [key, calls] of callsOf) {
      const live = calls.filter((c) => !killed.has(c.pid));
      if (live.length > 1) problems.push(`key ${key} was called by ${live.length} live processes`);
      if (calls.filter((c) => c.fresh).length !== 1) problems.push(`key ${key} created twice`);
    }
    // Every post the receiver accepted but whose answer never arrived was sent again, under the
    // same key, by the process that resumed the run.
    for (const kill of cms.acceptKills) {
      const calls = callsOf.get(kill.key) ?? [];
      if (calls.length < 2 || calls.at(-1)!.pid === kill.pid)
        problems.push(`the post of ${kill.key} accepted from killed ${kill.pid} was not resent`);
    }
    expect(problems, `seed ${seed}`).toEqual([]);
    expect(cms.posts.size, `seed ${seed}`).toBe(intents.length);
    expect(keys.size, `seed ${seed}`).toBe(intents.length);
    expect(cms.calls.length, `seed ${seed}: repeats happened`).toBeGreaterThan(keys.size);
    // Every activation stalled and killed after its effect was recorded ran again on resume and
    // got its result from the ledger, without a call.
    const replayed = readReplays(replays);
    expect(replayed.length, `seed ${seed}`).toBeGreaterThanOrEqual(kills.afterRecord);

    // Each run succeeded and holds, for each item, the post the receiver has under its key.
    const final = JSON.parse(readFileSync(states, 'utf8')) as Record<string, FinalState>;
    expect(Object.keys(final).sort(), `seed ${seed}`).toEqual(
      Array.from({ length: total }, (_, n) => runIdOf(n)),
    );
    for (const [runId, { status, state }] of Object.entries(final)) {
      const items = itemsOf(runId, 'many');
      expect(status, `seed ${seed}, ${runId}`).toBe('succeeded');
      expect(state.posts, `seed ${seed}, ${runId}`).toEqual(
        items.map((item, index) => ({
          index,
          item,
          id: cms.posts.get(keysOf.get(intentId({ runId, index, item }))![0]!)!.id,
        })),
      );
      expect(state.published, `seed ${seed}, ${runId}`).toBe(items.length);
    }

    // The file is sound, every run succeeded, and the ledger holds one record per key: the
    // post the receiver returned for it.
    const stored = await readStore(db);
    expect(stored.integrity, `seed ${seed}`).toBe('ok');
    expect(stored.runs, `seed ${seed}`).toHaveLength(total);
    expect(
      stored.runs.filter((r) => r.status !== 'succeeded'),
      `seed ${seed}`,
    ).toEqual([]);
    expect(stored.effects.map((e) => e.key).sort(), `seed ${seed}`).toEqual([...keys].sort());
    for (const effect of stored.effects) {
      const post = cms.posts.get(effect.key)!;
      expect(effect.run_id, `seed ${seed}, ${effect.key}`).toBe(post.runId);
      expect(JSON.parse(effect.result), `seed ${seed}, ${effect.key}`).toEqual(post);
    }

    // Calls by killed processes that a later process had to repeat: kills between call and record.
    const interrupted = [...callsOf.values()].reduce(
      (sum, calls) => sum + calls.slice(0, -1).filter((c) => killed.has(c.pid)).length,
      0,
    );
    expect(killed.size).toBeGreaterThanOrEqual(targetKills);
    expect(cms.acceptKills.length).toBeGreaterThanOrEqual(targetAcceptKills);
    expect(interrupted).toBeGreaterThanOrEqual(cms.acceptKills.length);
    console.log(
      `publish crash test: seed ${seed}, ${killed.size} kills (${cms.acceptKills.length} by the receiver between accept and record, ${kills.afterRecord} between record and completion, ${kills.timer} by timer), ${total} runs, ${intents.length} intents, ${cms.calls.length} raw calls, ${keys.size} distinct keys, ${cms.posts.size} posts, ${interrupted} calls repeated after a kill, ${replayed.length} effects answered by the ledger`,
    );
  }, 180_000);

  it('the publish crash: killed after the receiver accepted the post, the rerun gets the post it already has', async () => {
    const db = join(work, 'accepted.db');
    const replays = join(work, 'accepted.log');
    const states = join(work, 'accepted.json');
    const cms = new Receiver(db, () => 0);
    await cms.listen();
    try {
      // The first process posts, the receiver stores the post and kills it before answering.
      const first = start(cms, db, 1, { shape: 'one', replays });
      cms.killAtCall(first.proc.pid!, 1, first.exit);
      expect((await first.exit).signal, first.stderr()).toBe('SIGKILL');
      expect(cms.posts.size).toBe(1);
      const stranded = await readStore(db);
      expect(stranded.runs).toEqual([{ id: 'run-0000', status: 'running' }]);
      expect(stranded.effects).toEqual([]); // the ledger never heard back

      // The second process resumes the run and sends the same key; the receiver answers with
      // the post it already has.
      const second = start(cms, db, 1, { shape: 'one', replays, states });
      const { code } = await second.exit;
      expect(code, second.stderr()).toBe(0);

      const key = 'run-0000/draft:1[0]/publish:1/post';
      expect(cms.calls).toEqual([
        { key, pid: first.proc.pid, intent: 'run-0000 0 launch', fresh: true },
        { key, pid: second.proc.pid, intent: 'run-0000 0 launch', fresh: false },
      ]);
      expect(cms.callsAfterRecord).toEqual([]);
      expect([...cms.posts.values()]).toEqual([
        { id: 'post-1', key, runId: 'run-0000', index: 0, item: 'launch', intent: 'publish' },
      ]);
      expect(readReplays(replays)).toEqual([]);
      const final = JSON.parse(readFileSync(states, 'utf8')) as Record<string, FinalState>;
      expect(final['run-0000']).toEqual({
        status: 'succeeded',
        state: {
          items: ['launch'],
          posts: [{ index: 0, item: 'launch', id: 'post-1' }],
          published: 1,
        },
      });
      const stored = await readStore(db);
      expect(stored.integrity).toBe('ok');
      expect(stored.effects).toEqual([
        { run_id: 'run-0000', key, result: JSON.stringify(cms.posts.get(key)) },
      ]);
    } finally {
      await cms.close();
    }
  }, 30_000);

  it('killed after the ledger recorded the post, the rerun takes the post from the ledger and calls nothing', async () => {
    const db = join(work, 'recorded.db');
    const replays = join(work, 'recorded.log');
    const states = join(work, 'recorded.json');
    const cms = new Receiver(db, () => 0);
    await cms.listen();
    try {
      // The first process posts and records the answer, and dies before the activation completes.
      const first = start(cms, db, 1, { shape: 'one', stallAfter: 1, replays });
      await first.recorded;
      first.proc.kill('SIGKILL');
      expect((await first.exit).signal, first.stderr()).toBe('SIGKILL');
      const key = 'run-0000/draft:1[0]/publish:1/post';
      const stranded = await readStore(db);
      expect(stranded.runs).toEqual([{ id: 'run-0000', status: 'running' }]);
      expect(stranded.effects).toEqual([
        { run_id: 'run-0000', key, result: JSON.stringify(cms.posts.get(key)) },
      ]);

      // The second process runs the activation again; its effect is answered by the ledger.
      const second = start(cms, db, 1, { shape: 'one', replays, states });
      const { code } = await second.exit;
      expect(code, second.stderr()).toBe(0);

      expect(cms.calls).toEqual([
        { key, pid: first.proc.pid, intent: 'run-0000 0 launch', fresh: true },
      ]);
      expect(readReplays(replays)).toEqual([{ runId: 'run-0000', index: 0, pid: second.proc.pid }]);
      const final = JSON.parse(readFileSync(states, 'utf8')) as Record<string, FinalState>;
      expect(final['run-0000']?.state.posts).toEqual([{ index: 0, item: 'launch', id: 'post-1' }]);
      expect((await readStore(db)).effects).toHaveLength(1);
    } finally {
      await cms.close();
    }
  }, 30_000);
});
