import { describe, expect, it } from 'vitest';
import { groupsOf, layoutGraph } from '../../src/ui/graph-layout.js';
import { firstViewport, legibleZoom } from '../../src/ui/graph-viewport.js';
import { overlayOf } from '../../src/ui/path-overlay.js';
import { applyEvent, applyTrace, backoffOf, emptyModel } from '../../src/ui/run-model.js';
import {
  answerOf,
  formOf,
  initialValue,
  missingChoices,
  rejects,
} from '../../src/ui/schema-form-model.js';
import { diffStates } from '../../src/ui/state-diff.js';
import { expandSubgraphs } from '../../src/ui/subgraphs.js';
import { timeScale } from '../../src/ui/time-scale.js';
import type { GraphDef, StreamEvent } from '../../src/ui/types.js';

// The page's logic without a browser: the form a wait's schema makes, the diff of two states,
// the path drawn from a run's events, and the layout's groups for subgraphs.

let seq = 0;
const ev = (type: string, fields: Partial<StreamEvent> = {}): StreamEvent => ({
  offset: `${++seq}.0`,
  runId: 'r',
  seq,
  at: new Date(0).toISOString(),
  type,
  ...fields,
});

describe('a form made from a JSON Schema', () => {
  const schema = {
    type: 'object',
    properties: {
      approved: { type: 'boolean' },
      note: { type: 'string' },
      stars: { type: 'integer' },
      mood: { type: 'string', enum: ['glad', 'meh'] },
      tags: { type: 'array', items: { type: 'string' } },
      by: { type: 'object', properties: { team: { type: 'string' } }, required: ['team'] },
      extra: { type: 'array', items: { type: 'object' } },
    },
    required: ['approved', 'stars'],
  } as const;

  it('has an input for each kind of field, and a JSON text area for what it cannot make', () => {
    const form = formOf(schema);
    expect(form.kind).toBe('object');
    if (form.kind !== 'object') return;
    expect(Object.fromEntries(form.fields.map((f) => [f.name, f.field.kind]))).toEqual({
      approved: 'boolean',
      note: 'string',
      stars: 'number',
      mood: 'enum',
      tags: 'strings',
      by: 'object',
      extra: 'json',
    });
    expect(form.fields.find((f) => f.name === 'note')?.field).toEqual({
      kind: 'string',
      multiline: true,
    });
    expect(formOf(null).kind).toBe('json');
  });

  it('makes the answer from the inputs, leaving empty optional fields out', () => {
    const form = formOf(schema);
    const value = initialValue(form) as Record<string, unknown>;
    const answer = answerOf(form, {
      ...(value as Record<string, never>),
      approved: true,
      stars: '4',
      tags: ['a', ''],
      by: { team: 'docs' },
    });
    // `mood` is optional and nobody chose one: left out, not its first option.
    expect(answer).toEqual({
      approved: true,
      stars: 4,
      tags: ['a'],
      by: { team: 'docs' },
    });
  });

  it('chooses nothing for a person: an untouched yes-no question or choice is missing, not "no"', () => {
    const gate = formOf({
      type: 'object',
      properties: {
        approved: { type: 'boolean' },
        level: { type: 'string', enum: ['low', 'high'] },
        note: { type: 'string', default: '' },
        urgent: { type: 'boolean', default: false },
      },
      required: ['approved', 'level', 'note', 'urgent'],
    });
    const untouched = initialValue(gate) as Record<string, unknown>;
    expect(untouched).toEqual({ approved: '', level: '', note: '', urgent: false });
    expect(missingChoices(gate, untouched as never)).toEqual(['approved', 'level']);
    // An empty optional text is left out: the schema's default fills it.
    expect(answerOf(gate, untouched as never)).toEqual({ urgent: false });
    const chosen = { ...untouched, approved: false, level: '"high"' };
    expect(missingChoices(gate, chosen as never)).toEqual([]);
    expect(answerOf(gate, chosen as never)).toEqual({
      approved: false,
      level: 'high',
      urgent: false,
    });
    expect(missingChoices(formOf({ type: 'boolean' }), '')).toEqual(['answer']);
  });

  it('knows a rejection as `waymark reject` does: false, or approved: false', () => {
    const gate = formOf({
      type: 'object',
      properties: { approved: { type: 'boolean' }, note: { type: 'string' } },
      required: ['approved'],
    });
    expect(rejects(gate, { approved: false, note: 'no' })).toBe(true);
    expect(rejects(gate, { approved: true })).toBe(false);
    expect(rejects(formOf({ type: 'boolean' }), false)).toBe(true);
    expect(rejects(formOf({ type: 'boolean' }), true)).toBe(false);
    const other = formOf({ type: 'object', properties: { urgent: { type: 'boolean' } } });
    expect(rejects(other, { urgent: false })).toBe(false);
  });

  it('reads a nullable field as its type, and a union of constants as an enum', () => {
    expect(formOf({ anyOf: [{ type: 'string' }, { type: 'null' }] }).kind).toBe('string');
    expect(formOf({ anyOf: [{ const: 'a' }, { const: 'b' }] })).toEqual({
      kind: 'enum',
      options: ['a', 'b'],
    });
  });
});

describe('the state after a step against the step before', () => {
  it('names each changed path, and a list that grew by its new items', () => {
    expect(
      diffStates(
        { n: 1, log: ['a'], deep: { x: 1, y: 2 }, gone: true },
        { n: 2, log: ['a', 'b'], deep: { x: 1, y: 3 }, added: 'z' },
      ),
    ).toEqual([
      { path: 'n', kind: 'changed', before: 1, after: 2 },
      { path: 'log[1]', kind: 'added', after: 'b' },
      { path: 'deep.y', kind: 'changed', before: 2, after: 3 },
      { path: 'gone', kind: 'removed', before: true },
      { path: 'added', kind: 'added', after: 'z' },
    ]);
    expect(diffStates({ a: [1, 2] }, { a: [1, 2] })).toEqual([]);
  });
});

describe('the path drawn from the events of a run', () => {
  it('shows a sleeping activation as waiting until its time, with no attempt, and runs it once awake', () => {
    const m = emptyModel();
    const until = new Date(86_400_000).toISOString();
    applyEvent(
      m,
      ev('activation.scheduled', {
        activation: 'send:1',
        node: 'send',
        parent: null,
        notBefore: until,
        sleeping: true,
      }),
    );
    const send = m.byId.get('send:1')!;
    expect(send.status).toBe('waiting');
    expect(send.sleepsUntil).toBe(86_400_000);
    expect(send.attempts).toEqual([]);
    // A node's notBefore passed: its body is scheduled under the same activation.
    applyEvent(m, ev('activation.scheduled', { activation: 'send:1', node: 'send', attempt: 1 }));
    expect(send.status).toBe('scheduled');
    expect(send.sleepsUntil).toBeUndefined();
    expect(send.attempts.map((a) => [a.attempt, a.notBefore])).toEqual([[1, undefined]]);
  });

  it('shows an attempt its rate limit deferred as queued for the resource until its window has room', () => {
    const m = emptyModel();
    const until = new Date(60_000).toISOString();
    applyEvent(
      m,
      ev('activation.scheduled', {
        activation: 'call:1',
        node: 'call',
        parent: null,
        attempt: 1,
        notBefore: until,
        sleeping: true,
        rateLimited: 'openai',
      }),
    );
    const call = m.byId.get('call:1')!;
    expect([call.status, call.sleepsUntil, call.rateLimited]).toEqual([
      'waiting',
      60_000,
      'openai',
    ]);
    applyEvent(m, ev('activation.scheduled', { activation: 'call:1', node: 'call', attempt: 1 }));
    expect([call.status, call.rateLimited]).toEqual(['scheduled', undefined]);
  });

  it('counts activations per node, the edges taken, retries, fan-out copies, and where it stands', () => {
    const m = emptyModel();
    applyEvent(m, ev('activation.scheduled', { activation: 'a:1', node: 'a', parent: null }));
    applyEvent(m, ev('activation.completed', { activation: 'a:1', node: 'a' }));
    for (const i of [0, 1]) {
      applyEvent(
        m,
        ev('activation.scheduled', {
          activation: `b:${i + 1}`,
          node: 'b',
          parent: 'a:1',
          branch: { fanOut: 'a:1', index: i },
        }),
      );
    }
    applyEvent(m, ev('activation.failed', { activation: 'b:1', attempt: 1, retrying: true }));
    applyEvent(
      m,
      ev('activation.scheduled', {
        activation: 'b:1',
        node: 'b',
        attempt: 2,
        notBefore: new Date(500).toISOString(),
      }),
    );
    applyEvent(m, ev('activation.completed', { activation: 'b:1', attempt: 2 }));
    applyEvent(m, ev('activation.completed', { activation: 'b:2', attempt: 1 }));
    // The join is scheduled by the fan-out; both branches came back to it.
    applyEvent(m, ev('activation.scheduled', { activation: 'j:1', node: 'j', parent: 'a:1' }));
    applyEvent(m, ev('activation.completed', { activation: 'j:1' }));
    // A person node opens its wait in the commit that ended the activation before it.
    applyEvent(
      m,
      ev('wait.opened', { activation: 'ask:1', node: 'ask', seq, requestId: 'r/ask:1' }),
    );
    applyTrace(m, [
      {
        node: 'b',
        activation: 'b:1',
        parent: 'a:1',
        attempt: 1,
        startedAt: new Date(100).toISOString(),
        durationMs: 50,
        status: 'failed',
        retried: true,
      },
      {
        node: 'b',
        activation: 'b:1',
        parent: 'a:1',
        attempt: 2,
        startedAt: new Date(500).toISOString(),
        durationMs: 10,
        status: 'succeeded',
        retried: false,
      },
    ]);

    const o = overlayOf(m, 'waiting');
    expect(Object.fromEntries(o.counts)).toEqual({ a: 1, b: 2, j: 1, ask: 1 });
    expect(Object.fromEntries(o.edges)).toEqual({ 'a->b': 2, 'b->j': 1, 'j->ask': 1 });
    expect(o.retried.get('b')).toBe(1);
    expect(o.copies.get('b')).toEqual([0, 1]);
    expect([...o.stoppedAt]).toEqual(['ask']);
    expect(backoffOf(m.byId.get('b:1')!)).toBe(350);
  });
});

describe('the layout of a declared graph', () => {
  const def: GraphDef = {
    name: 'g',
    version: 1,
    fields: [],
    entry: 'plan',
    nodes: [
      { name: 'plan', kind: 'code' },
      { name: 'review/draft', kind: 'model' },
      { name: 'review/check/lint', kind: 'code' },
      { name: 'ship', kind: 'effect' },
    ],
    edges: [
      { from: 'plan', to: 'review/draft' },
      { from: 'review/draft', to: 'review/check/lint' },
    ],
    routes: [{ from: 'review/check/lint', targets: ['ship', 'review/draft'] }],
    fanOuts: [],
  };

  it('nests a node in a group per prefix of its name: subgraphs drawn as groups', () => {
    expect(groupsOf('review/check/lint')).toEqual(['review', 'review/check']);
    const { nodes, edges } = layoutGraph(def);
    const by = new Map(nodes.map((n) => [n.id, n]));
    expect(by.get('review')?.group).toBe(true);
    expect(by.get('review/check')?.parent).toBe('review');
    expect(by.get('review/check/lint')).toMatchObject({ parent: 'review/check', label: 'lint' });
    expect(by.get('plan')?.parent).toBeUndefined();
    // Parents come before their children, as the drawing needs.
    expect(nodes.findIndex((n) => n.id === 'review')).toBeLessThan(
      nodes.findIndex((n) => n.id === 'review/draft'),
    );
    expect(edges.map((e) => `${e.id}:${e.kind}`)).toEqual([
      'plan->review/draft:edge',
      'review/draft->review/check/lint:edge',
      'review/check/lint->ship:route',
      'review/check/lint->review/draft:route',
    ]);
  });
});

describe('a graph with a subgraph (issue 17)', () => {
  const child: GraphDef = {
    name: 'review',
    version: 1,
    fields: [],
    entry: 'read',
    nodes: [
      { name: 'read', kind: 'code' },
      { name: 'accept', kind: 'code' },
      { name: 'reject', kind: 'code' },
    ],
    edges: [
      { from: 'accept', to: '__end__' },
      { from: 'reject', to: '__end__' },
    ],
    routes: [{ from: 'read', targets: ['accept', 'reject'] }],
    fanOuts: [],
  };
  const parent: GraphDef = {
    name: 'post',
    version: 1,
    fields: [],
    entry: 'prep',
    nodes: [
      { name: 'prep', kind: 'code' },
      { name: 'review', kind: 'code' },
      { name: 'publish', kind: 'code', terminal: true },
    ],
    edges: [
      { from: 'prep', to: 'review' },
      { from: 'review', to: 'publish' },
    ],
    routes: [],
    fanOuts: [],
    subgraphs: [{ name: 'review', graph: child }],
  };

  it("is drawn with the child's nodes by path, in a group, entered at its entry and left from its ends", () => {
    const flat = expandSubgraphs(parent);
    expect(flat.nodes.map((n) => n.name)).toEqual([
      'prep',
      'publish',
      'review/read',
      'review/accept',
      'review/reject',
    ]);
    expect(flat.edges.map((e) => `${e.from}->${e.to}`)).toEqual([
      'prep->review/read',
      'review/accept->publish',
      'review/reject->publish',
    ]);
    expect(flat.routes).toEqual([
      { from: 'review/read', targets: ['review/accept', 'review/reject'] },
    ]);
    const { nodes } = layoutGraph(parent);
    expect(nodes.find((n) => n.id === 'review')?.group).toBe(true);
  });

  it('takes the edges into and out of it from the commits that ran its inline entry and exit', () => {
    const m = emptyModel();
    applyEvent(m, ev('activation.scheduled', { activation: 'prep:1', node: 'prep', parent: null }));
    applyEvent(m, ev('activation.completed', { activation: 'prep:1' }));
    // The entry (review:1) and the exit (review/__end__:1) are never scheduled themselves.
    applyEvent(
      m,
      ev('activation.scheduled', {
        activation: 'review/read:1',
        node: 'review/read',
        seq,
        parent: 'review:1',
      }),
    );
    applyEvent(m, ev('activation.completed', { activation: 'review/read:1' }));
    applyEvent(
      m,
      ev('activation.scheduled', {
        activation: 'review/reject:1',
        node: 'review/reject',
        seq,
        parent: 'review/read:1',
      }),
    );
    applyEvent(m, ev('activation.completed', { activation: 'review/reject:1' }));
    applyEvent(
      m,
      ev('activation.scheduled', {
        activation: 'publish:1',
        node: 'publish',
        seq,
        parent: 'review/__end__:1',
      }),
    );
    expect(Object.fromEntries(overlayOf(m, 'running').edges)).toEqual({
      'prep->review/read': 1,
      'review/read->review/reject': 1,
      'review/reject->publish': 1,
    });
  });
});

describe('the time axis of the waterfall', () => {
  it('draws a long wait short, as a break of its length, and the work around it to scale', () => {
    // 300 ms of work, ten minutes waiting for a person, 100 ms more.
    const scale = timeScale([
      [0, 200],
      [150, 300],
      [600_300, 600_400],
    ]);
    expect(scale.spanMs).toBe(600_400);
    expect(scale.breaks).toHaveLength(1);
    expect(scale.breaks[0]!.ms).toBe(600_000);
    // 400 ms drawn in the 96% the break leaves: 0.24% a millisecond, not 0.00017%.
    expect(scale.at(0)).toBe(0);
    expect(scale.at(200)).toBeCloseTo(48);
    expect(scale.at(300)).toBeCloseTo(72);
    expect(scale.breaks[0]!.left).toBeCloseTo(72);
    expect(scale.at(600_300)).toBeCloseTo(76);
    expect(scale.at(600_400)).toBeCloseTo(100);
  });

  it('keeps short gaps (a backoff of a few hundred ms) to scale', () => {
    const scale = timeScale([
      [0, 1000],
      [1400, 2000],
    ]);
    expect(scale.breaks).toEqual([]);
    expect(scale.at(1400)).toBeCloseTo(70);
  });
});

describe('the first view of the graph', () => {
  const chain = (n: number): GraphDef => ({
    name: 'chain',
    version: 1,
    fields: [],
    entry: 's0',
    nodes: Array.from({ length: n }, (_, i) => ({ name: `s${i}`, kind: 'code' })),
    edges: Array.from({ length: n - 1 }, (_, i) => ({ from: `s${i}`, to: `s${i + 1}` })),
    routes: [],
    fanOuts: [],
  });

  it('fits a small graph whole, and a tall one at a legible zoom from its top', () => {
    const small = firstViewport(layoutGraph(chain(3)).nodes, 900, 600);
    expect(small.zoom).toBeGreaterThanOrEqual(legibleZoom);
    const tall = layoutGraph(chain(16)).nodes;
    const view = firstViewport(tall, 900, 600);
    expect(view.zoom).toBe(legibleZoom);
    // The entry is at the top of the panel, inside it.
    const entry = tall.find((n) => n.id === 's0')!;
    expect(entry.y * view.zoom + view.y).toBeGreaterThanOrEqual(0);
    expect((entry.y + entry.height) * view.zoom + view.y).toBeLessThan(100);
    const middle = (entry.x + entry.width / 2) * view.zoom + view.x;
    expect(middle).toBeCloseTo(450);
  });
});

describe('heartbeats on the run page', () => {
  it('keeps the last one of an attempt: told live while it runs, then its trace entry', () => {
    const m = emptyModel();
    applyEvent(m, ev('activation.scheduled', { activation: 'gen:1', node: 'gen', parent: null }));
    applyEvent(m, ev('heartbeat', { activation: 'gen:1', attempt: 1, details: { tokens: 10 } }));
    applyEvent(m, ev('heartbeat', { activation: 'gen:1', attempt: 1, details: { tokens: 90 } }));
    const attempt = m.byId.get('gen:1')!.attempts[0]!;
    expect(attempt.heartbeat?.details).toEqual({ tokens: 90 });
    applyTrace(m, [
      {
        node: 'gen',
        activation: 'gen:1',
        parent: null,
        attempt: 1,
        startedAt: new Date(100).toISOString(),
        durationMs: 50,
        status: 'succeeded',
        retried: false,
        heartbeat: { at: new Date(140).toISOString(), details: { tokens: 120 } },
      },
    ]);
    expect(attempt.heartbeat).toEqual({
      at: new Date(140).toISOString(),
      details: { tokens: 120 },
    });
  });
});
