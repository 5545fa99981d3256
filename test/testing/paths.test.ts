import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { all, END, graph, MemoryStore, permanentError, person } from '../../src/index.js';
import { coverageItems, graphCoverage, graphPaths, pathCases } from '../../src/testing/index.js';

const State = z.object({
  go: z.enum(['work', 'ask', 'end', 'loop']).default('work'),
  n: z.number().default(0),
  ok: z.boolean().default(false),
});

// One of each way on: a router with four targets (END among them), an onError edge, a fan-out to
// a join, a person's wait and a capped loop. Every body throws: paths never call them.
const unreachable = () => {
  throw permanentError('a body ran');
};
const review = graph('paths-review', { state: State })
  .node('start', unreachable)
  .node('work', unreachable, { onError: 'recover' })
  .node('recover', unreachable, { terminal: true })
  .node('ask', person({ prompt: () => 'ok?', answer: z.object({ ok: z.boolean() }) }))
  .node('again', unreachable, { visits: 3, onError: 'recover' })
  .node('split', unreachable)
  .node('left', unreachable, { writes: [] })
  .node('right', unreachable, { writes: [] })
  .node('merge', unreachable, { join: all(), terminal: true })
  .route(
    'start',
    (s) => (s.go === 'work' ? 'work' : s.go === 'ask' ? 'ask' : s.go === 'loop' ? 'again' : END),
    ['work', 'ask', 'again', END],
  )
  .edge('work', 'split')
  .edge('ask', END)
  .route('again', (s) => (s.n < 2 ? 'again' : END), ['again', END])
  .fanOut('split', ['left', 'right'], 'merge')
  .edge('left', 'merge')
  .edge('right', 'merge')
  .entry('start')
  .compile();

describe('graphPaths', () => {
  it('lists every way from the entry to an end, each loop taken back once, without calling a body', () => {
    const { paths, truncated, cut } = graphPaths(review);

    expect(paths.map((p) => p.name)).toEqual([
      'start [route -> work] work split merge',
      'start [route -> work] work [error -> recover] recover',
      'start [route -> ask] ask',
      'start [route -> again] again [route -> again] again [route -> __end__]',
      'start [route -> again] again [route -> again] again [error -> recover] recover',
      'start [route -> again] again [route -> __end__]',
      'start [route -> again] again [error -> recover] recover',
      'start [route -> __end__]',
    ]);
    expect([truncated, cut]).toEqual([false, 0]);
    // A fan-out is one step to its join; its branches run, but are not multiplied in.
    expect(paths[0]!.steps[2]).toEqual({
      node: 'split',
      via: 'fanOut',
      to: 'merge',
      branches: ['left', 'right'],
    });
    expect(paths[0]!.nodes).toEqual(['start', 'work', 'split', 'merge']);
  });

  it('names the coverage items each path exercises, and the shortest path to each', () => {
    const { paths, shortest } = graphPaths(review);

    expect(paths[2]!.items).toEqual(['route start -> ask', 'wait ask']);
    expect(paths[1]!.items).toEqual(['route start -> work', 'error work -> recover']);
    // Every route, error edge and wait the graph declares is on a listed path.
    const reached = coverageItems(review)
      .filter((i) => i.kind === 'route' || i.kind === 'error' || i.kind === 'wait')
      .map((i) => i.id);
    for (const id of reached) expect(shortest.has(id), id).toBe(true);
    expect(shortest.get('route again -> again')!.name).toBe(
      'start [route -> again] again [route -> again] again [route -> __end__]',
    );
    expect(shortest.get('merge')!.name).toBe('start [route -> work] work split merge');
  });

  it('visits: 1 gives simple paths; a visit cap bounds the unrolling; maxSteps and maxPaths cut', () => {
    const simple = graphPaths(review, { visits: 1 }).paths.map((p) => p.name);
    expect(simple).not.toContain(
      'start [route -> again] again [route -> again] again [route -> __end__]',
    );
    expect(simple).toHaveLength(6);
    // again's cap is 3: asking for 10 visits unrolls it three times, no more.
    const unrolled = graphPaths(review, { visits: 10 }).paths.filter(
      (p) => p.nodes.at(-1) === 'again',
    );
    expect(Math.max(...unrolled.map((p) => p.nodes.filter((n) => n === 'again').length))).toBe(3);
    expect(graphPaths(review, { maxPaths: 2 })).toMatchObject({ truncated: true });
    expect(graphPaths(review, { maxSteps: 2 }).cut).toBeGreaterThan(0);
  });
});

// The same shape with bodies that do their work, for the cases to run.
const triage = graph('paths-triage', {
  state: z.object({
    kind: z.enum(['bug', 'question', 'spam']).default('spam'),
    severity: z.number().default(0),
    approved: z.boolean().default(false),
  }),
})
  .node('classify', unreachable, { onError: 'escalate' })
  .node('fix', unreachable)
  .node('approve', person({ prompt: () => 'ship?', answer: z.object({ approved: z.boolean() }) }))
  .node('ship', unreachable, { terminal: true })
  .node('reply', unreachable, { terminal: true })
  .node('escalate', unreachable, { terminal: true })
  .route('classify', (s) => (s.kind === 'bug' ? 'fix' : s.kind === 'question' ? 'reply' : END), [
    'fix',
    'reply',
    END,
  ])
  .edge('fix', 'approve')
  .route('approve', (s) => (s.approved ? 'ship' : 'escalate'), ['ship', 'escalate'])
  .entry('classify')
  .compile();

const script = {
  'route classify -> fix': { kind: 'bug' },
  'route classify -> reply': { kind: 'question' },
  'route classify -> __end__': { kind: 'spam' },
  'node fix': { severity: 2 },
  'wait approve': { approved: true },
};

describe('pathCases', () => {
  it('one case per node and item the paths reach, each run by the scripted outputs through the graph’s own routers', async () => {
    const cases = pathCases(triage, script);

    expect(cases.map((c) => c.name)).toEqual([
      'classify [route -> __end__]',
      'classify [route -> fix] fix approve [route -> ship] ship',
      'classify [route -> reply] reply',
      'classify [error -> escalate] escalate',
      'classify [route -> fix] fix approve [route -> escalate] escalate',
    ]);
    // The answer in the script approves, so the path that escalates after approve is the one
    // case its script cannot steer: it says which entry decides.
    const outcomes = await Promise.all(cases.map((c) => c.run()));
    expect(outcomes.map((o) => o.ok)).toEqual([true, true, true, true, false]);
    expect(outcomes[1]!.took).toEqual(['classify', 'fix', 'approve', 'ship']);
    expect(outcomes[1]!.result.state).toMatchObject({ kind: 'bug', severity: 2, approved: true });
    expect(outcomes[3]!.result.errors[0]).toMatchObject({ node: 'classify', code: 'NODE_FAILED' });
    expect(outcomes[4]!.message).toBe(
      'after "approve" the run went to "ship", the path to "escalate": give the script "route approve -> escalate" an update its router sends there',
    );
  });

  it('says which script entry is missing when a path waits for an answer it has none for', async () => {
    const { 'wait approve': _, ...noAnswer } = script;
    const ships = pathCases(triage, noAnswer).find((c) => c.path.nodes.includes('ship'));

    const outcome = await ships!.run();

    expect(outcome).toMatchObject({
      ok: false,
      message: 'the run waits at "approve": give the script "wait approve"',
    });
    expect(outcome.took).toEqual(['classify', 'fix']);
  });

  it("a route's entry steers each visit of a loop in turn", async () => {
    const loop = graph('paths-loop', { state: z.object({ n: z.number().default(0) }) })
      .node('draft', unreachable, { visits: 3 })
      .node('check', unreachable, { visits: 3 })
      .node('done', unreachable, { terminal: true })
      .edge('draft', 'check')
      .route('check', (s) => (s.n < 2 ? 'draft' : 'done'), ['draft', 'done'])
      .entry('draft')
      .compile();
    const cases = pathCases(
      loop,
      { 'route check -> draft': { n: 1 }, 'route check -> done': { n: 2 } },
      { cases: 'all' },
    );

    const outcomes = await Promise.all(cases.map((c) => c.run()));

    expect(cases.map((c) => c.name)).toEqual([
      'draft check [route -> draft] draft check [route -> done] done',
      'draft check [route -> done] done',
    ]);
    expect(outcomes.map((o) => o.ok)).toEqual([true, true]);
  });
});

describe('docs/testing.md', () => {
  it('runs its paths example: the cases of a graph, read back as coverage', async () => {
    const doc = readFileSync(new URL('../../docs/testing.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('## Paths'));
    const example = /^```ts\n([\s\S]*?)^```$/m.exec(section)![1]!;
    const routed = { ...script, 'route approve -> escalate': { approved: false } };
    const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (
      ...args: string[]
    ) => (...values: unknown[]) => Promise<void>;
    const names = ['MemoryStore', 'pathCases', 'graphCoverage', 'triage', 'script', 'expect'];
    const values = [MemoryStore, pathCases, graphCoverage, triage, routed, expect];

    await new AsyncFunction(...names, example)(...values);
  });
});
