import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  append,
  boundOf,
  END,
  enqueue,
  graph,
  history,
  inspect,
  loadTrace,
  parent,
  permanentError,
  renderGraph,
  resume,
  rewind,
  run,
  type Store,
  validate,
  watch,
} from '../../src/index.js';
import { describePg, pgStoreForFile } from '../store/fixtures/postgres.js';
import { stores } from '../support/stores.js';
import { workUntilSettled } from '../support/worker-runs.js';

// A child node's parent({ goto, update }) (LangGraph.js: Command.PARENT): the child ends there,
// the update goes to the parent's state through the parent's reducers, and the parent goes on
// at the node named; the targets are declared on the child node and checked when the parent
// compiles, as a router's are.

const Triage = z.object({
  text: z.string(),
  urgent: z.boolean().default(false),
  checked: z.boolean().default(false),
});

/** The child: classify ends it early for an urgent issue; otherwise check runs, then the child ends. */
const triage = graph('triage', { state: Triage })
  .node(
    'classify',
    (s) =>
      s.urgent
        ? parent({ goto: 'escalate', update: { log: [`urgent: ${s.text}`] } })
        : { checked: false },
    { parentGoto: ['escalate'] },
  )
  .node('check', () => ({ checked: true }))
  .edge('classify', 'check')
  .edge('check', END)
  .entry('classify')
  .compile();

const Issue = z.object({
  text: z.string(),
  urgent: z.boolean().default(false),
  log: z.array(z.string()).default([]),
});

let checks = 0;
const desk = graph('desk', { state: Issue, reducers: { log: append } })
  .subgraph('triage', triage, {
    input: { text: 'text', urgent: 'urgent' },
    output: (o) => ({ log: [o.checked ? 'checked' : 'unchecked'] }),
  })
  .node('answer', () => {
    checks++;
    return { log: ['answered'] };
  })
  .node('escalate', () => ({ log: ['escalated'] }), { terminal: true })
  .edge('triage', 'answer')
  .edge('answer', END)
  .entry('triage')
  .compile();

function behaviours(makeStore: () => Store) {
  it("a child node's parent({ goto }) ends the child and continues the parent at that node, the update through the parent's reducers", async () => {
    const store = makeStore();
    const done = await run(desk, { text: 'fire', urgent: true }, { store, runId: 'p1' });
    expect(done.status).toBe('succeeded');
    // The output mapping was not applied ('unchecked' is absent) and `check` never ran.
    expect(done.state.log).toEqual(['urgent: fire', 'escalated']);
    expect(done.trace.entries.map((e) => e.node)).toEqual(['triage/classify', 'escalate']);
    // One event: the completion of the node that sent; replayed, the stored run says the same.
    const steps = (await history(store, desk, 'p1')).steps.map((s) => s.event);
    expect(steps.filter((e) => e === 'completed')).toHaveLength(2);
    // The child's slot is emptied, as its exit empties it.
    const stored = (await inspect(store, desk, 'p1')).snapshot.state;
    expect(stored).toEqual({ ...done.state, '@triage': null });
    // A watcher is told what the node returned, as the update markers are shown.
    const told = [];
    for await (const e of watch(store, desk, 'p1', { follow: false })) told.push(e);
    expect(told).toContainEqual(
      expect.objectContaining({
        type: 'activation.completed',
        node: 'triage/classify',
        update: { '@waymark': 'parent', goto: 'escalate', update: { log: ['urgent: fire'] } },
      }),
    );
  });

  it('a child that does not send goes on as a child: its own nodes, then its output mapping and the edge', async () => {
    const store = makeStore();
    const before = checks;
    const done = await run(desk, { text: 'typo' }, { store, runId: 'p2' });
    expect(done.state.log).toEqual(['checked', 'answered']);
    expect(checks).toBe(before + 1);
  });

  it('a rewind to the child node that sent runs it again and sends again', async () => {
    const store = makeStore();
    await run(desk, { text: 'fire', urgent: true }, { store, runId: 'p3' });
    const again = await rewind(store, desk, 'p3', { to: 'triage/classify', runId: 'p3b' });
    expect(again.status).toBe('succeeded');
    expect(again.state.log).toEqual(['urgent: fire', 'escalated']);
    const trace = await loadTrace(store, 'p3b');
    expect(trace.entries.map((e) => e.node)).toEqual(['triage/classify', 'escalate']);
  });
}

describe.each(stores)('parent goto with the %s store', (_name, makeStore) => {
  behaviours(makeStore);
});

const db = pgStoreForFile();

describePg('parent goto on PostgreSQL, and through a worker', () => {
  behaviours(() => db.store);

  it('a worker runs the child node that sends, and the parent goes on at the target', async () => {
    const id = await enqueue(db.store, desk, { text: 'flood', urgent: true });
    await workUntilSettled(db.store, [desk], [id]);
    const view = await inspect(db.store, desk, id);
    expect(view.snapshot.status).toBe('succeeded');
    expect(view.snapshot.state).toMatchObject({ log: ['urgent: flood', 'escalated'] });
  });
});

describe('declared and checked when the parent compiles, like a route', () => {
  /** A child whose node may send its parent to `targets`. */
  const sender = (targets: string[]) =>
    graph('sender', { state: Triage })
      .node('classify', () => parent({ goto: targets[0]! }), { parentGoto: targets })
      .entry('classify')
      .compile();
  const parentOf = (child: ReturnType<typeof sender>) =>
    graph('host', { state: Issue })
      .subgraph('triage', child, { input: { text: 'text' }, output: () => ({}) })
      .node('answer', () => ({}), { terminal: true })
      .node('escalate', () => ({}), { terminal: true })
      .edge('triage', 'answer')
      .entry('triage');

  it('a child node that only sends its parent has a way out: the child compiles on its own', () => {
    expect(validate(sender(['escalate']).def)).toEqual([]);
  });

  it('refuses a parentGoto target the parent does not have, with a did-you-mean', () => {
    const found = parentOf(sender(['escalte'])).validate();
    expect(found).toContainEqual(
      expect.objectContaining({
        code: 'ROUTE_TARGET_UNKNOWN',
        node: 'triage',
        details: expect.objectContaining({ suggestion: 'escalate' }),
      }),
    );
    expect(() => parentOf(sender(['escalte'])).compile()).toThrow(/ROUTE_TARGET_UNKNOWN/);
  });

  it('a node reached only by a parent goto is reachable; one reached by none is not', () => {
    expect(parentOf(sender(['escalate'])).validate()).toEqual([]);
    const codes = parentOf(sender([END]))
      .validate()
      .map((d) => `${d.code} ${d.node}`);
    expect(codes).toEqual(['UNREACHABLE escalate']);
  });

  it('a parent goto back to an upstream node is a cycle, which needs a visit cap', () => {
    const child = graph('again', { state: Triage })
      .node('classify', () => parent({ goto: 'prep' }), { parentGoto: ['prep'] })
      .entry('classify')
      .compile();
    const host = graph('loop', { state: Issue })
      .node('prep', () => ({}))
      .subgraph('triage', child, { input: { text: 'text' }, output: () => ({}) })
      .edge('prep', 'triage')
      .edge('triage', END)
      .entry('prep');
    expect(host.validate().map((d) => d.code)).toContain('CYCLE_UNCAPPED');
  });

  it('a declaration that is not a list of names is refused', () => {
    const bad = graph('bad', { state: Triage })
      .node('classify', () => ({}), { parentGoto: 'escalate' as never })
      .entry('classify');
    expect(bad.validate().map((d) => d.code)).toContain('OPTION_INVALID');
  });
});

/** The error a failed run ended with. */
const failure = (done: { readonly status: string }) =>
  'error' in done ? (done.error as { code: string; message: string }) : undefined;

describe('moving a run to a node reached by a parent goto', () => {
  it("resume with goto takes a node only a parent goto leads to: it is on the run's own path", async () => {
    const store = stores[0]![1]();
    const failing = graph('failing', { state: Issue, reducers: { log: append } })
      .subgraph('triage', triage, { input: { text: 'text', urgent: 'urgent' }, output: () => ({}) })
      .node('answer', () => {
        throw permanentError('NODE_FAILED', 'no answer today');
      })
      .node('escalate', () => ({ log: ['escalated'] }), { terminal: true })
      .edge('triage', 'answer')
      .edge('answer', END)
      .entry('triage')
      .compile();
    expect((await run(failing, { text: 'slow' }, { store, runId: 'm1' })).status).toBe('failed');
    const moved = await resume(store, failing, 'm1', { goto: 'escalate' });
    expect(moved.status).toBe('succeeded');
    expect(moved.state.log).toEqual(['escalated']);
  });
});

describe('to END', () => {
  const Log = z.object({ log: z.array(z.string()).default([]) });
  const inner = graph('inner', { state: Log })
    .node('stop', () => parent({ goto: END, update: { log: ['stopped'] } }), { parentGoto: [END] })
    .entry('stop')
    .compile();
  const mid = graph('mid', { state: Log, reducers: { log: append } })
    .subgraph('inner', inner, { output: () => ({}) })
    .node('after', () => ({ log: ['after'] }), { terminal: true })
    .edge('inner', 'after')
    .entry('inner')
    .compile();

  it("from a grandchild, END is the end of the child it is mounted in: the child's exit hands its output on", async () => {
    const top = graph('top', { state: Log, reducers: { log: append } })
      .subgraph('mid', mid)
      .node('last', () => ({ log: ['last'] }), { terminal: true })
      .edge('mid', 'last')
      .entry('mid')
      .compile();
    const done = await run(top, {});
    expect(done.state.log).toEqual(['stopped', 'last']);
  });

  it('from a child of the top graph, END ends that path of the run', async () => {
    const done = await run(mid, {});
    expect(done.status).toBe('succeeded');
    expect(done.state.log).toEqual(['stopped']);
    expect(done.trace.entries.map((e) => e.node)).toEqual(['inner/stop']);
  });
});

describe('counted', () => {
  it("the cost bound counts a node only a parent goto reaches, as a route's target is counted", () => {
    const nodes = boundOf(desk).nodes.map((n) => n.node);
    expect(nodes).toContain('escalate');
  });
});

describe('drawn', () => {
  it("`waymark graph` draws a parent goto as a route from the child's node out of its block", () => {
    const mermaid = renderGraph(desk.def);
    const id = (label: string) => mermaid.match(new RegExp(`(n\\d+)\\["${label}"\\]`))?.[1];
    expect(mermaid).toContain(`${id('classify')} -.->|"parent"| ${id('escalate')}`);
  });
});

describe('refused at run time as ROUTE_UNDECLARED', () => {
  it('a target the node does not declare fails the node, and the run records why', async () => {
    const child = graph('liar', { state: Triage })
      .node('classify', () => parent({ goto: 'answer' }), { parentGoto: ['escalate'] })
      .entry('classify')
      .compile();
    const host = graph('host2', { state: Issue })
      .subgraph('triage', child, { input: { text: 'text' }, output: () => ({}) })
      .node('answer', () => ({}), { terminal: true })
      .node('escalate', () => ({}), { terminal: true })
      .edge('triage', 'answer')
      .entry('triage')
      .compile();
    const done = await run(host, { text: 'x' });
    expect(done.status).toBe('failed');
    expect(failure(done)).toMatchObject({
      code: 'ROUTE_UNDECLARED',
      node: 'triage/classify',
      details: { value: 'answer', parentGoto: ['escalate'] },
    });
    expect(failure(done)?.message).toContain('"answer"');
  });

  it('a graph run on its own has no parent to send to', async () => {
    const done = await run(triage, { text: 'x', urgent: true });
    expect(done.status).toBe('failed');
    expect(failure(done)).toMatchObject({ code: 'ROUTE_UNDECLARED', node: 'classify' });
    expect(failure(done)?.message).toContain('runs in no subgraph');
  });

  it("the parent's update is checked by the parent's schemas and the subgraph's writes", async () => {
    const child = graph('writer', { state: Triage })
      .node('classify', () => parent({ goto: 'answer', update: { text: 3 } }), {
        parentGoto: ['answer'],
      })
      .entry('classify')
      .compile();
    const host = graph('host3', { state: Issue })
      .subgraph('triage', child, { input: { text: 'text' }, output: () => ({}), writes: ['log'] })
      .node('answer', () => ({}), { terminal: true })
      .edge('triage', 'answer')
      .entry('triage')
      .compile();
    const done = await run(host, { text: 'x' });
    expect(failure(done)).toMatchObject({ code: 'WRITE_DENIED', node: 'triage/classify' });
  });
});

describe('in a map of subgraphs', () => {
  const Item = z.object({ file: z.string(), size: z.number().default(0) });
  const audit = graph('audit', { state: Item })
    .node(
      'look',
      (s) =>
        s.file.endsWith('.bin')
          ? parent({ goto: 'collect', update: { skipped: [s.file] } })
          : { size: s.file.length },
      { parentGoto: ['collect'] },
    )
    .node('measure', (s) => ({ size: s.size * 10 }))
    .edge('look', 'measure')
    .edge('measure', END)
    .entry('look')
    .compile();
  const Files = z.object({
    files: z.array(z.string()),
    sizes: z.array(z.number()).default([]),
    skipped: z.array(z.string()).default([]),
  });
  const all = graph('audit-all', { state: Files, reducers: { sizes: append, skipped: append } })
    .node('list', () => undefined, { reads: [], writes: [] })
    .subgraph('audit', audit, {
      input: (_s, { item }) => ({ file: item as string }),
      output: (o) => ({ sizes: [o.size] }),
      reads: [],
      writes: ['sizes', 'skipped'],
    })
    .node('collect', () => undefined, { terminal: true })
    .map('list', { over: 'files', branch: 'audit', join: 'collect' })
    .edge('audit', 'collect')
    .entry('list');

  it("a goto to the map's join ends that item's branch with its update; the other items run their child", async () => {
    const done = await run(all.compile(), { files: ['a.txt', 'b.bin', 'cc.txt', 'd.bin'] });
    expect(done.status).toBe('succeeded');
    expect(done.state.sizes).toEqual([50, 60]);
    expect(done.state.skipped).toEqual(['b.bin', 'd.bin']);
    const bodies = done.trace.entries.map((e) => e.node).filter((n) => n.endsWith('measure'));
    expect(bodies).toHaveLength(2);
  });

  it('a goto out of the branch is refused when the parent compiles, as any route out of a branch is', () => {
    const escaping = graph('escaping', { state: Item })
      .node('look', () => parent({ goto: 'report' }), { parentGoto: ['report'] })
      .entry('look')
      .compile();
    const host = graph('host4', { state: Files })
      .node('list', () => undefined)
      .subgraph('audit', escaping, {
        input: (_s, { item }) => ({ file: item as string }),
        reads: [],
        writes: [],
      })
      .node('collect', () => undefined)
      .node('report', () => undefined, { terminal: true })
      .map('list', { over: 'files', branch: 'audit', join: 'collect' })
      .edge('audit', 'collect')
      .edge('collect', 'report')
      .entry('list');
    expect(host.validate().map((d) => d.code)).toContain('BRANCH_ESCAPES');
  });
});

describe('ported from LangGraph.js (libs/langgraph-core/src/tests/pregel.test.ts)', () => {
  const Messages = z.object({
    messages: z.array(z.string()).default([]),
    user_name: z.string().default(''),
  });

  it('test_parent_command: a child node hands the parent an update; the parent goes on by its own way', async () => {
    const subgraph = graph('tool-child', { state: Messages })
      .node('tool', () => parent({ update: { user_name: 'Meow' } }), { terminal: true })
      .entry('tool')
      .compile();
    const g = graph('alice-parent', { state: Messages, reducers: { messages: append } })
      .subgraph('alice', subgraph, { output: () => ({}) })
      .edge('alice', END)
      .entry('alice')
      .compile();
    const store = stores[1]![1]();
    const res = await run(g, { messages: ['get user name'] }, { store, runId: 'lg1' });
    expect(res.state).toEqual({ messages: ['get user name'], user_name: 'Meow' });
    const state = await inspect(store, g, 'lg1');
    expect(state.snapshot.status).toBe('succeeded');
    expect(state.snapshot.pending).toEqual([]);
  });

  it('test_parent_command with goto with double updates: the parent sees the update sent, not the child state', async () => {
    const subgraph = graph('init-tool', { state: Messages })
      .node('init', () => ({ user_name: 'Woof' }))
      .node('tool', () => parent({ update: { user_name: 'Meow' }, goto: 'bob' }), {
        parentGoto: ['bob'],
      })
      .edge('init', 'tool')
      .entry('init')
      .compile();
    const g = graph('double', { state: Messages, reducers: { messages: append } })
      .node('init', () => ({}))
      .subgraph('alice', subgraph)
      .node('bob', (s) => {
        if (s.user_name !== 'Meow') throw new Error('failed to update state from child');
        return { messages: ['bob'] };
      })
      .route('init', () => 'alice', ['alice'])
      .edge('alice', 'bob')
      .edge('bob', END)
      .entry('init')
      .compile();
    const res = await run(g, { messages: ['get user name'] });
    expect(res.status).toBe('succeeded');
    expect(res.state).toEqual({ messages: ['get user name', 'bob'], user_name: 'Meow' });
    // bob ran once: the goto replaced the subgraph's edge to it, it did not add to it.
    expect(res.trace.entries.map((e) => e.node)).toEqual([
      'init',
      'alice/init',
      'alice/tool',
      'bob',
    ]);
  });

  it('test_parent_command from grandchild graph: the goto goes to the nearest parent, the child', async () => {
    const grandchild = graph('grandchild', { state: Messages })
      .node(
        'tool',
        () => parent({ update: { messages: ['grandkid'], user_name: 'jeffrey' }, goto: 'robert' }),
        { parentGoto: ['robert'] },
      )
      .entry('tool')
      .compile();
    const child = graph('child', { state: Messages, reducers: { messages: append } })
      .subgraph('bob', grandchild, { output: () => ({}) })
      .node('robert', (s) => {
        if (s.user_name !== 'jeffrey') throw new Error('failed to update state from grandchild');
        return { messages: ['robert'] };
      })
      .edge('bob', 'robert')
      .edge('robert', END)
      .entry('bob')
      .compile();
    const g = graph('grandparent', { state: Messages, reducers: { messages: append } })
      .subgraph('alice', child, {
        output: (o) => ({ messages: o.messages.slice(1), user_name: o.user_name }),
      })
      .edge('alice', END)
      .entry('alice')
      .compile();
    const store = stores[0]![1]();
    const res = await run(g, { messages: ['get user name'] }, { store, runId: 'lg3' });
    expect(res.status).toBe('succeeded');
    expect(res.state).toEqual({
      messages: ['get user name', 'grandkid', 'robert'],
      user_name: 'jeffrey',
    });
    expect(res.trace.entries.map((e) => e.node)).toEqual(['alice/bob/tool', 'alice/robert']);
    expect((await inspect(store, g, 'lg3')).snapshot.state).toMatchObject(res.state);
  });
});
