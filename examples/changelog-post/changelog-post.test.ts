import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  answer,
  type EffectRecord,
  loadTrace,
  MemoryStore,
  type RunResult,
  resume,
  run,
  type Store,
} from '../../src/index.js';
import { recordModel, replayModel } from '../../src/model/index.js';
import { SqliteStore } from '../../src/sqlite.js';
import type { FakeOpenAI } from '../../test/model/fake-openai.js';
import { scriptedOpenAI } from '../../test/support/scripted-openai.js';
import { cms, readCms } from './cms.js';
import changelogPost, { changelogPost as build, changelogFile, parseChangelog } from './graph.js';
import { State } from './schema.js';
import { respond, scriptedWriter, steps } from './scripted.js';

const modelSteps = ['select', 'outline', 'draft', 'fact-check'];
const invented = 'The invoice editor also gets a dark mode.';
const background =
  'Scheduled exports build on the CSV export for invoices and customers that arrived in 2.3.0.';

let dir: string;
let cmsFile: string;
const saved = { cms: process.env.WAYMARK_CMS_FILE, faults: process.env.WAYMARK_FAULTS };

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'changelog-post-'));
  cmsFile = join(dir, 'cms.json');
  process.env.WAYMARK_CMS_FILE = cmsFile;
  delete process.env.WAYMARK_FAULTS;
});

afterEach(() => {
  for (const [name, value] of [
    ['WAYMARK_CMS_FILE', saved.cms],
    ['WAYMARK_FAULTS', saved.faults],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  rmSync(dir, { recursive: true, force: true });
});

/** Answers the run's one open wait, then resumes it. */
async function reply(store: Store, runId: string, value: unknown) {
  const [wait] = await store.listWaits(runId, { open: true });
  await answer(store, runId, wait!.requestId, value, { by: 'editor', graph: changelogPost });
  return resume(store, changelogPost, runId);
}

/** Completed activations per node over the run's whole history. */
async function completions(store: Store, runId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const e of (await loadTrace(store, runId)).entries) {
    if (e.status === 'succeeded') counts[e.node] = (counts[e.node] ?? 0) + 1;
  }
  return counts;
}

const input = JSON.parse(
  readFileSync(new URL('./input.json', import.meta.url), 'utf8'),
) as unknown as { version: string };

describe('the changelog-post example', () => {
  it('sends the invented claim back to draft, passes a claim only the full changelog backs, and publishes after approval', async () => {
    const store = new MemoryStore();

    const first = await run(changelogPost, input, { store, runId: 'post' });

    expect(first.status).toBe('waiting');
    expect(first.trace.path).toEqual([
      ...['fetch', 'select', 'outline', 'draft', 'fact-check'],
      ...['draft', 'fact-check'],
    ]);
    // The finding was draft's input: the second draft removed exactly the invented claim.
    const draft = first.state.draft!;
    expect(draft.revision).toBe(2);
    expect(draft.addressed).toEqual([`removed: ${invented}`]);
    expect(draft.body).not.toContain('dark mode');
    expect(first.state.findings).toEqual([]);
    // The four model steps are model nodes; with no run model they call the scripted one.
    expect(changelogPost.def.nodes.filter((n) => n.kind === 'model').map((n) => n.name)).toEqual(
      modelSteps,
    );
    const calls = first.trace.entries.filter((e) => modelSteps.includes(e.node));
    expect(calls).toHaveLength(6);
    for (const e of calls) expect(e.usage?.model).toBe('scripted:changelog-post');
    expect(first.quarantine).toEqual([]);
    // A 2.3.0 claim: backed by the changelog fetch read, not by the 2.4.0 entries selected.
    expect(draft.claims.map((c) => c.text)).toContain(background);
    expect(first.state.selected.every((e) => e.version === '2.4.0')).toBe(true);
    expect(first.state.changelog.map((e) => e.version)).toContain('2.3.0');
    const bySelection = steps['fact-check']({
      claims: draft.claims,
      changelog: first.state.selected,
    });
    expect(bySelection.verdicts.filter((v) => !v.backed).map((v) => v.claim)).toEqual([background]);
    expect(changelogPost.def.nodes.find((n) => n.name === 'fact-check')?.reads).toContain(
      'changelog',
    );

    const [wait] = await store.listWaits('post', { open: true });
    expect(wait?.requestId).toBe('post/approve:1');
    expect(JSON.parse(wait!.request).prompt).toContain('Publish "What\'s new in Ledgerly 2.4.0"');

    const done = await reply(store, 'post', { approved: true });

    expect(done.status).toBe('succeeded');
    expect((await loadTrace(store, 'post')).path).toEqual([
      ...['fetch', 'select', 'outline', 'draft', 'fact-check'],
      ...['draft', 'fact-check', 'approve', 'publish'],
    ]);
    const stored = readCms(cmsFile);
    expect(stored.calls).toBe(1);
    expect(Object.values(stored.posts)).toEqual([
      expect.objectContaining({
        id: 'post-1',
        key: 'post/publish:1/publish',
        body: draft.body,
        model: 'scripted:changelog-post',
      }),
    ]);
    expect(done.state.published).toEqual({
      id: 'post-1',
      key: 'post/publish:1/publish',
      url: `file://${cmsFile}#post-1`,
    });
  });

  it('fails at fact-check under an injected fault, then resumes from fact-check and publishes once, across store reopenings', async () => {
    const db = join(dir, 'waymark.db');
    let store = new SqliteStore({ path: db });
    // Read when fact-check runs, not when graph.ts was imported (before this line).
    process.env.WAYMARK_FAULTS = 'slow-cms, fact-check';

    let result: RunResult<State> = await run(changelogPost, input, { store, runId: 'faulty' });

    expect(result.status).toBe('failed');
    if (result.status !== 'failed') throw new Error('unreachable');
    expect(result.error).toMatchObject({ node: 'fact-check', class: 'transient' });
    expect(result.error.message).toContain('injected by WAYMARK_FAULTS');
    expect(
      result.trace.entries.filter((e) => e.node === 'fact-check').map((e) => e.status),
    ).toEqual(['failed', 'failed']);
    expect(result.trace.path).toEqual(['fetch', 'select', 'outline', 'draft', 'fact-check']);
    await store.close();

    delete process.env.WAYMARK_FAULTS;
    store = new SqliteStore({ path: db });
    result = await resume(store, changelogPost, 'faulty');

    expect(result.status).toBe('waiting');
    expect(result.trace.path).toEqual(['fact-check', 'draft', 'fact-check']);
    expect(await completions(store, 'faulty')).toEqual({
      fetch: 1,
      select: 1,
      outline: 1,
      draft: 2,
      'fact-check': 2,
    });
    expect(readCms(cmsFile)).toEqual({ calls: 0, posts: {} });
    await store.close();

    store = new SqliteStore({ path: db });
    result = await reply(store, 'faulty', { approved: true });

    expect(result.status).toBe('succeeded');
    expect(result.trace.path).toEqual(['approve', 'publish']);
    expect(Object.keys(readCms(cmsFile).posts)).toEqual(['faulty/publish:1/publish']);
    expect(readCms(cmsFile).calls).toBe(1);

    // Resuming a run that succeeded returns it as it is: no second publish, no second call.
    const again = await resume(store, changelogPost, 'faulty');
    expect(again.status).toBe('succeeded');
    expect(again.state.published).toEqual(result.state.published);
    expect(readCms(cmsFile).calls).toBe(1);
    expect(Object.keys(readCms(cmsFile).posts)).toHaveLength(1);
    expect((await completions(store, 'faulty')).publish).toBe(1);
    await store.close();
  });

  it('sends a rejection back to draft with the note, asks again, and publishes what was approved', async () => {
    const store = new MemoryStore();
    await run(changelogPost, input, { store, runId: 'r' });
    const note = 'Say that amount_decimal goes away in 3.0, in the first paragraph.';

    const rejected = await reply(store, 'r', { approved: false, note });

    expect(rejected.status).toBe('waiting');
    expect(rejected.trace.path).toEqual(['approve', 'draft', 'fact-check']);
    expect(rejected.state.notes).toEqual([note]);
    expect(rejected.state.draft?.revision).toBe(3);
    expect(rejected.state.draft?.addressed).toContain(note);
    expect(rejected.state.draft?.body).toContain(note);
    const [wait] = await store.listWaits('r', { open: true });
    expect(wait?.requestId).toBe('r/approve:2');
    expect(JSON.parse(wait!.request).prompt).toContain(note);
    expect(readCms(cmsFile).calls).toBe(0);

    const done = await reply(store, 'r', { approved: true });

    expect(done.status).toBe('succeeded');
    expect(Object.values(readCms(cmsFile).posts).map((p) => p.body)).toEqual([
      rejected.state.draft?.body,
    ]);
    expect(await completions(store, 'r')).toMatchObject({ fetch: 1, select: 1, outline: 1 });
  });

  it('keeps rejections bounded: the visit cap on draft stops a third round, publishing nothing', async () => {
    const store = new MemoryStore();
    await run(changelogPost, input, { store, runId: 'r' });
    await reply(store, 'r', { approved: false, note: 'one' });
    await reply(store, 'r', { approved: false, note: 'two' });

    const capped = await reply(store, 'r', { approved: false, note: 'three' });

    expect(capped.status).toBe('failed');
    if (capped.status !== 'failed') throw new Error('unreachable');
    expect(capped.error).toMatchObject({ code: 'VISIT_CAP', class: 'cap', node: 'draft' });
    expect(readCms(cmsFile)).toEqual({ calls: 0, posts: {} });
  });

  it('refuses an answer that is not { approved, note? }', async () => {
    const store = new MemoryStore();
    await run(changelogPost, input, { store, runId: 'r' });
    await expect(reply(store, 'r', { approve: 'yes' })).rejects.toThrow(/ANSWER_INVALID/);
    await expect(reply(store, 'r', { approved: true, note: 3 })).rejects.toThrow(/ANSWER_INVALID/);
  });
});

describe('the model steps over the OpenAI-compatible provider, offline', () => {
  let server: FakeOpenAI | undefined;
  afterEach(async () => {
    vi.unstubAllEnvs();
    await server?.close();
    server = undefined;
  });

  it('records a run against a local endpoint, then replays it from the cassette to the same state', async () => {
    server = await scriptedOpenAI(respond);
    vi.stubEnv('WAYMARK_OPENAI_BASE_URL', server.baseUrl);
    const cassette = join(dir, 'cassette.json');

    const recorded = await run(
      build({ model: recordModel('openai-compatible:writer', cassette) }),
      input,
    );

    expect(recorded.status).toBe('waiting');
    expect(recorded.trace.path).toEqual([
      ...['fetch', 'select', 'outline', 'draft', 'fact-check'],
      ...['draft', 'fact-check'],
    ]);
    expect(recorded.state.draft?.addressed).toEqual([`removed: ${invented}`]);
    expect(recorded.state.draft?.claims.map((c) => c.text)).toContain(background);
    // Each model call went over HTTP as structured output, and its tokens are in the trace.
    expect(server.requests).toHaveLength(6);
    for (const body of server.requests) {
      expect(body).toMatchObject({ model: 'writer', response_format: { type: 'json_schema' } });
    }
    const calls = recorded.trace.entries.filter((e) => modelSteps.includes(e.node));
    expect(calls.map((e) => e.node)).toEqual([...modelSteps, 'draft', 'fact-check']);
    for (const e of calls) {
      expect(e.usage).toMatchObject({ model: 'openai-compatible:writer' });
      expect(e.usage?.inputTokens).toBeGreaterThan(0);
      expect(e.usage?.outputTokens).toBeGreaterThan(0);
    }
    const file = JSON.parse(readFileSync(cassette, 'utf8')) as { entries: object };
    expect(Object.keys(file.entries)).toHaveLength(6);

    await server.close();
    server = undefined;
    const replayed = await run(build({ model: replayModel(cassette) }), input);

    expect(replayed.status).toBe('waiting');
    expect(replayed.trace.path).toEqual(recorded.trace.path);
    expect(replayed.state).toEqual(recorded.state);
    expect(replayed.trace.entries.map((e) => e.usage)).toEqual(
      recorded.trace.entries.map((e) => e.usage),
    );
  });

  it('the run model (--model) overrides the graph own model, is kept with the run, and is named on the post', async () => {
    server = await scriptedOpenAI(respond);
    vi.stubEnv('WAYMARK_OPENAI_BASE_URL', server.baseUrl);
    const own = scriptedWriter();
    const g = build({ model: own });
    const store = new MemoryStore();

    const first = await run(g, input, { store, runId: 'm', model: 'openai-compatible:writer' });
    expect(first.status).toBe('waiting');
    const [wait] = await store.listWaits('m', { open: true });
    await answer(store, 'm', wait!.requestId, { approved: true }, { by: 'editor', graph: g });
    const done = await resume(store, g, 'm');

    expect(done.status).toBe('succeeded');
    expect(own.requests).toHaveLength(0);
    expect(server.requests).toHaveLength(6);
    expect(readCms(cmsFile).posts['m/publish:1/publish']?.model).toBe('openai-compatible:writer');
  });
});

/** A store that loses the first effect record, as if the process died right after the call. */
class LosingStore extends MemoryStore {
  lost = 0;
  override async recordEffect(effect: EffectRecord): Promise<EffectRecord> {
    if (this.lost++ === 0) throw new Error('connection lost before the ledger recorded the post');
    return super.recordEffect(effect);
  }
}

describe('publishing when the ledger misses the first call', () => {
  it('sends the same key again and the CMS answers with the post it has: 1 post, 2 calls', async () => {
    const store = new LosingStore();
    await run(changelogPost, input, { store, runId: 'r' });

    const done = await reply(store, 'r', { approved: true });

    expect(done.status).toBe('succeeded');
    expect(done.trace.entries.filter((e) => e.node === 'publish').map((e) => e.status)).toEqual([
      'failed',
      'succeeded',
    ]);
    const stored = readCms(cmsFile);
    expect(stored.calls).toBe(2);
    expect(Object.keys(stored.posts)).toEqual(['r/publish:1/publish']);
    expect(done.state.published?.id).toBe('post-1');
  });
});

describe('the file-backed CMS', () => {
  it('dedupes on the key: a second publish with the same key returns the first post and stores nothing new', async () => {
    const post = { version: '2.4.0', title: 'What is new', body: 'first' };

    const first = await cms.publish('run/publish:1/publish', post);
    const second = await cms.publish('run/publish:1/publish', { ...post, body: 'second' });
    const other = await cms.publish('other/publish:1/publish', post);

    expect(second).toEqual(first);
    expect(first).toMatchObject({ id: 'post-1', body: 'first' });
    expect(other.id).toBe('post-2');
    const stored = readCms(cmsFile);
    expect(stored.calls).toBe(3);
    expect(Object.keys(stored.posts)).toEqual(['run/publish:1/publish', 'other/publish:1/publish']);
    expect(stored.posts['run/publish:1/publish']?.body).toBe('first');
  });

  it('keeps its file under WAYMARK_CMS_FILE, read at each call', async () => {
    const elsewhere = join(dir, 'nested', 'other.json');
    process.env.WAYMARK_CMS_FILE = elsewhere;
    await cms.publish('k', { version: '1.0.0', title: 't', body: 'b' });
    expect(readCms(elsewhere).calls).toBe(1);
    expect(readCms(cmsFile)).toEqual({ calls: 0, posts: {} });
  });
});

describe('the fixture and the input', () => {
  it('parses ten entries over three versions, and input.json is a valid run input', async () => {
    const entries = parseChangelog(readFileSync(changelogFile, 'utf8'));
    expect(entries).toHaveLength(10);
    expect([...new Set(entries.map((e) => e.version))]).toEqual(['2.4.0', '2.3.0', '2.2.0']);
    expect(entries[0]).toEqual({
      version: '2.4.0',
      section: 'Added',
      text: 'Scheduled exports: any CSV export can run daily or weekly and arrive by email.',
    });
    expect(State.parse(input).version).toBe('2.4.0');
  });
});
