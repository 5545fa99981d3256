import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  append,
  END,
  enqueue,
  graph,
  history,
  inspect,
  loadTrace,
  parent,
  rewind,
  run,
  type Store,
  validate,
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
