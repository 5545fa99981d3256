import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  all,
  answer,
  append,
  END,
  graph,
  inspect,
  isWaymarkError,
  loadTrace,
  MemoryStore,
  patchState,
  person,
  resume,
  run,
  type StreamEvent,
  watch,
} from '../../src/index.js';
import { describePg, pgStoreForFile } from '../store/fixtures/postgres.js';
import { type RawStore, rawMemory, rawPostgres, rawSqlite } from '../support/raw-store.js';
import { dyingAt } from '../support/stores.js';

// Untracked fields (LangGraph.js: UntrackedValue) live in memory for one drive of a run, in
// process, and never reach its store: every test searches everything the store was given and
// keeps for the value a node wrote.

const secret = 'MARKER-untracked-7f3a';
const State = z.object({
  topic: z.string().default('t'),
  seen: z.array(z.string()).default([]),
  connection: z.string().nullable().default(null),
});
const saw = (s: { connection: string | null }) => [s.connection === secret ? 'live' : 'default'];

/** open writes the secret, use reads it, a person waits, then later reads it again. */
const withWait = graph('untracked-wait', {
  state: State,
  reducers: { seen: append },
  untracked: ['connection'],
})
  .node('open', () => ({ connection: secret }), { reads: [], writes: ['connection'] })
  .node('use', (s) => ({ seen: saw(s) }), { reads: ['connection'], writes: ['seen'] })
  .node('approve', person({ prompt: 'go on?', answer: z.boolean(), update: () => ({}) }))
  .node('later', (s) => ({ seen: saw(s) }), { reads: ['connection'], writes: ['seen'] })
  .edge('open', 'use')
  .edge('use', 'approve')
  .edge('approve', 'later')
  .edge('later', END)
  .entry('open')
  .compile();

const db = pgStoreForFile();
const opened: RawStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});
const harnesses: [string, () => RawStore][] = [
  ['memory', rawMemory],
  ['sqlite', rawSqlite],
];

function behaviour(open: () => RawStore) {
  it('an untracked field lives for the drive, is never stored, and a resume starts it from its default', async () => {
    const raw = open();
    opened.push(raw);
    const { store } = raw;

    const first = await run(withWait, {}, { store, runId: 'u1' });
    expect(first.status).toBe('waiting');
    // In memory for the rest of the drive: the next node read it, and the result shows it.
    expect(first.state.seen).toEqual(['live']);
    expect(first.state.connection).toBe(secret);
    expect((await inspect(store, withWait, 'u1')).snapshot.state.connection).toBeNull();

    const [wait] = await store.listWaits('u1');
    await answer(store, 'u1', wait!.requestId, true, { by: 'editor' });
    const done = await resume(store, withWait, 'u1');

    expect(done.status).toBe('succeeded');
    expect(done.state.seen).toEqual(['live', 'default']);
    expect(done.state.connection).toBeNull();
    const stored = await raw.raw();
    expect(stored).not.toContain(secret);
    // What the node read the secret for is stored, as any tracked field (JSON inside JSON).
    expect(stored).toMatch(/seen\\*":\[\\*"live/);
  });

  it('a patch of an untracked field is refused: nothing would keep it', async () => {
    const raw = open();
    opened.push(raw);
    await run(withWait, {}, { store: raw.store, runId: 'u2' });

    const refused = await patchState(
      raw.store,
      withWait,
      'u2',
      { connection: 'other' },
      { by: 'ops', reason: 'test' },
    ).catch((e: unknown) => e);
    expect(isWaymarkError(refused) && refused.code).toBe('OPTIONS_INVALID');
    expect(String(refused)).toContain('untracked "connection"');
  });
}

describe.each(harnesses)('untracked fields in process, %s store', (_name, open) => {
  behaviour(open);
});

describePg('untracked fields in process, postgres store', () => {
  behaviour(() => rawPostgres(db));
});

describe('untracked fields and what is told or reused', () => {
  it('the stream, live or read back from the store, tells updates and states without the field', async () => {
    const raw = rawMemory();
    const live: StreamEvent[] = [];
    await run(withWait, {}, { store: raw.store, runId: 's1', watch: (e) => live.push(e) });
    const stored: StreamEvent[] = [];
    for await (const e of watch(raw.store, withWait, 's1', { follow: false, states: true }))
      stored.push(e);

    expect(JSON.stringify(live)).not.toContain(secret);
    expect(JSON.stringify(stored)).not.toContain(secret);
    expect(live.map((e) => e.type)).toEqual(stored.map((e) => e.type));
    const opened = live.find((e) => e.type === 'activation.completed' && e.node === 'open');
    expect(opened).toMatchObject({ update: {} });
  });

  it("a branch's untracked write reaches its join live, and no snapshot of the open fan-out holds it", async () => {
    const raw = rawMemory();
    const fan = graph('untracked-fan', {
      state: State,
      reducers: { seen: append },
      untracked: ['connection'],
    })
      .node('split', () => ({}))
      .node('opens', () => ({ connection: secret }), { reads: [], writes: ['connection'] })
      .node('notes', () => ({ seen: ['note'] }), { reads: [], writes: ['seen'] })
      .node('join', (s) => ({ seen: saw(s) }), {
        join: all(),
        reads: ['connection'],
        writes: ['seen'],
      })
      .fanOut('split', ['opens', 'notes'], 'join')
      .edge('opens', 'join')
      .edge('notes', 'join')
      .edge('join', END)
      .entry('split')
      .compile();

    // A snapshot after every step: the ones taken while the fan-out is open hold its branches.
    const result = await run(fan, {}, { store: raw.store, snapshotEvery: 1 });
    expect(result.state.seen).toEqual(['note', 'live']);
    expect(await raw.raw()).toContain('fanOuts\\":{\\"split:1');
    expect(await raw.raw()).not.toContain(secret);
  });

  it('a router decides on the default, as a replay of the history would', async () => {
    const routed = graph('untracked-route', {
      state: State,
      reducers: { seen: append },
      untracked: ['connection'],
    })
      .node('open', () => ({ connection: secret }), { writes: ['connection'] })
      .node('live', () => ({ seen: ['live'] }))
      .node('default', () => ({ seen: ['default'] }))
      .route('open', (s) => (s.connection === secret ? 'live' : 'default'), ['live', 'default'])
      .edge('live', END)
      .edge('default', END)
      .entry('open')
      .compile();

    const result = await run(routed, {}, { store: new MemoryStore() });
    expect(result.state.seen).toEqual(['default']);
  });

  it('a run that dies after its router decided resumes on the path it took', async () => {
    const ran: string[] = [];
    const routed = graph('untracked-crash', {
      state: State,
      reducers: { seen: append },
      untracked: ['connection'],
    })
      .node('open', () => ({ connection: secret }), { writes: ['connection'] })
      .node('live', () => {
        ran.push('live');
        return { seen: ['live'] };
      })
      .node('default', () => {
        ran.push('default');
        return { seen: ['default'] };
      })
      .node('after', () => ({ seen: ['after'] }))
      .route('open', (s) => (s.connection === secret ? 'live' : 'default'), ['live', 'default'])
      .edge('live', 'after')
      .edge('default', 'after')
      .edge('after', END)
      .entry('open')
      .compile();
    const store = new MemoryStore();

    // The process dies as it commits `after`: the router's choice is in the history, with no
    // snapshot after it, so the resume replays it; a router that saw the live value would
    // have chosen otherwise than its replay.
    const died = await run(routed, {}, { store: dyingAt(store, 4), runId: 'c1' }).catch((e) => e);
    expect(String(died)).toContain('the process died');
    const resumed = await resume(store, routed, 'c1');

    expect(resumed.state.seen).toEqual(['default', 'after']);
    expect(ran).toEqual(['default']);
    expect((await loadTrace(store, 'c1')).path).toEqual(['open', 'default', 'after']);
  });

  it('an input hash leaves out an untracked field it reads, and a cached output leaves it out', async () => {
    const raw = rawMemory();
    let calls = 0;
    const cached = graph('untracked-cache', {
      state: State,
      reducers: { seen: append },
      untracked: ['connection'],
    })
      .node(
        'fetch',
        (s) => {
          calls++;
          return { seen: [s.topic], connection: secret };
        },
        {
          reads: ['topic', 'connection'],
          writes: ['seen', 'connection'],
          cache: { ttlMs: 60_000 },
        },
      )
      .node('use', (s) => ({ seen: saw(s) }), { reads: ['connection'], writes: ['seen'] })
      .edge('fetch', 'use')
      .edge('use', END)
      .entry('fetch')
      .compile();

    const first = await run(cached, { connection: 'a' }, { store: raw.store });
    const second = await run(cached, { connection: 'b' }, { store: raw.store });

    // Two values of the untracked field, one hash: the second run takes the first's output,
    // without the untracked field (it was never stored), so its next node sees the default.
    expect(calls).toBe(1);
    expect(first.state.seen).toEqual(['t', 'live']);
    expect(second.state.seen).toEqual(['t', 'default']);
    expect(await raw.raw()).not.toContain(secret);
  });
});
