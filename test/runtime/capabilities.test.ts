// Node capabilities: a node that declares `reads` sees only those fields, and one that declares
// `writes` may update only those. See docs/security.md.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  any,
  append,
  END,
  type ErrorValue,
  graph,
  person,
  type RunResult,
  run,
  validate,
} from '../../src/index.js';

const State = z.object({
  topic: z.string(),
  notes: z.array(z.string()).default([]),
  secret: z.string().default('s3cret'),
  summary: z.string().default(''),
});

/** The error that stopped a failed run; undefined when the run did not fail. */
const errorOf = (result: RunResult<unknown>): ErrorValue | undefined =>
  result.status === 'failed' ? result.error : undefined;

/** One node `work` with the given body and options, then END. */
const single = (
  body: (s: z.output<typeof State>) => unknown,
  options: { reads?: ('topic' | 'notes' | 'secret' | 'summary')[]; writes?: 'summary'[] } = {},
) =>
  graph('g', { state: State })
    .node('work', (s) => body(s) as never, { ...options, retry: { attempts: 3 } })
    .edge('work', END)
    .entry('work')
    .compile();

describe('reads: a node sees only the fields it declares', () => {
  it('a node reading a field outside its reads fails with READ_DENIED at that read, not retried', async () => {
    const reached: string[] = [];
    const g = single(
      (s) => {
        reached.push(`topic ${s.topic}`);
        reached.push(`secret ${s.secret}`);
        reached.push('after');
        return { summary: 'leaked' };
      },
      { reads: ['topic', 'notes'] },
    );

    const result = await run(g, { topic: 'tea' });

    expect(result.status).toBe('failed');
    expect(reached).toEqual(['topic tea']);
    expect(errorOf(result)).toMatchObject({
      node: 'work',
      code: 'READ_DENIED',
      class: 'permanent',
      attempt: 1,
      message:
        'node "work" read "secret", which is not among the fields it may read [topic, notes]',
      details: { node: 'work', field: 'secret', reads: ['topic', 'notes'] },
    });
    expect(result.trace.entries).toHaveLength(1);
    expect(result.state.summary).toBe('');
  });

  it('a node that reads only its declared fields runs as before', async () => {
    const g = single((s) => ({ summary: `${s.topic}: ${s.notes.join(', ')}` }), {
      reads: ['topic', 'notes'],
    });

    const result = await run(g, { topic: 'tea', notes: ['green', 'black'] });

    expect(result.status).toBe('succeeded');
    expect(result.state.summary).toBe('tea: green, black');
  });

  it('the view lists only the declared fields: keys, spread, JSON and `in`', async () => {
    let seen: Record<string, unknown> = {};
    const g = single(
      (s) => {
        seen = {
          keys: Object.keys(s),
          spread: { ...s },
          json: JSON.stringify(s),
          hasTopic: 'topic' in s,
          frozen: Object.isFrozen(s),
        };
        return undefined;
      },
      { reads: ['topic', 'notes'] },
    );

    await run(g, { topic: 'tea', notes: ['green'] });

    expect(seen).toEqual({
      keys: ['topic', 'notes'],
      spread: { topic: 'tea', notes: ['green'] },
      json: '{"topic":"tea","notes":["green"]}',
      hasTopic: true,
      frozen: true,
    });
  });

  it.each([
    ['`in`', (s: Record<string, unknown>) => 'secret' in s],
    [
      'destructuring',
      (s: Record<string, unknown>) => {
        const { secret } = s;
        return secret;
      },
    ],
    ['Object.hasOwn', (s: Record<string, unknown>) => Object.hasOwn(s, 'secret')],
    ['a computed key', (s: Record<string, unknown>) => s[['sec', 'ret'].join('')]],
  ])('reading an undeclared field with %s is READ_DENIED too', async (_how, read) => {
    const g = single((s) => read(s as never), { reads: ['topic'] });

    const result = await run(g, { topic: 'tea' });

    expect(errorOf(result)?.code).toBe('READ_DENIED');
  });

  it('keys that are not state fields behave as on a plain object, so await and serialisers work', async () => {
    let probes: unknown[] = [];
    const g = single(
      async (s) => {
        const same = await Promise.resolve(s); // looks up `then`
        const view = s as Record<string, unknown>;
        probes = [same === s, view.then, view.toJSON, typeof view.hasOwnProperty, view.typo];
        return undefined;
      },
      { reads: ['topic'] },
    );

    const result = await run(g, { topic: 'tea' });

    expect(result.status).toBe('succeeded');
    expect(probes).toEqual([true, undefined, undefined, 'function', undefined]);
  });

  it('nested values in the view are deeply frozen, like the state', async () => {
    const g = single(
      (s) => {
        (s.notes as string[]).push('sneaky');
      },
      { reads: ['notes'] },
    );

    const result = await run(g, { topic: 'tea', notes: ['green'] });

    expect(errorOf(result)?.message).toMatch(/not extensible|read.only|frozen/i);
    expect(result.state.notes).toEqual(['green']);
  });

  it('a node without reads gets the whole state, as it always did', async () => {
    let keys: string[] = [];
    const g = single((s) => {
      keys = Object.keys(s);
    });

    await run(g, { topic: 'tea' });

    expect(keys).toEqual(['topic', 'notes', 'secret', 'summary']);
  });

  it('a router sees what its node may read and write; reading outside that fails the run with READ_DENIED', async () => {
    const routed = (router: (s: z.output<typeof State>) => 'publish' | typeof END) =>
      graph('g', { state: State })
        .node('draft', () => ({ summary: 'ok' }), { reads: ['topic'], writes: ['summary'] })
        .node('publish', () => undefined, { terminal: true })
        .route('draft', router, ['publish', END])
        .entry('draft')
        .compile();

    const fine = await run(
      routed((s) => (s.topic === 'tea' ? 'publish' : END)),
      { topic: 'tea' },
    );
    // A router decides on what its node found: the node's own output is in its view.
    const onOutput = await run(
      routed((s) => (s.summary === 'ok' ? 'publish' : END)),
      { topic: 'tea' },
    );
    const denied = await run(
      routed((s) => (s.secret ? 'publish' : END)),
      { topic: 'tea' },
    );

    expect(fine.status).toBe('succeeded');
    expect(fine.trace.entries.map((e) => e.node)).toEqual(['draft', 'publish']);
    expect(onOutput.trace.entries.map((e) => e.node)).toEqual(['draft', 'publish']);
    expect(denied.status).toBe('failed');
    expect(errorOf(denied)).toMatchObject({
      node: 'draft',
      code: 'READ_DENIED',
      class: 'permanent',
      message:
        'the router of "draft" read "secret", which is not among the fields it may read [topic, summary]',
      details: { router: 'draft', node: 'draft', field: 'secret', reads: ['topic', 'summary'] },
    });
  });

  it('a router of a node that declares reads but not writes sees the whole state: its node may write anything', async () => {
    const g = graph('g', { state: State })
      .node('draft', () => ({ summary: 'ready' }), { reads: ['topic'] })
      .node('publish', () => undefined, { terminal: true })
      .route('draft', (s) => (s.secret === 'x' ? 'publish' : END), ['publish', END])
      .entry('draft')
      .compile();

    const result = await run(g, { topic: 'tea', secret: 'x' });

    expect(result.trace.entries.map((e) => e.node)).toEqual(['draft', 'publish']);
  });

  it("a person node's prompt sees only the node's reads", async () => {
    const g = graph('g', { state: State })
      .node(
        'approve',
        person({
          prompt: (s) => `Publish ${s.topic} (${s.secret})?`,
          answer: z.object({ summary: z.string() }),
        }),
        { reads: ['topic'] },
      )
      .edge('approve', END)
      .entry('approve')
      .compile();

    const result = await run(g, { topic: 'tea' });

    expect(result.status).toBe('failed');
    expect(errorOf(result)).toMatchObject({ node: 'approve', code: 'READ_DENIED' });
  });
});

describe('reads in a map: the view is over the branch-local state', () => {
  const Files = z.object({
    files: z.array(z.string()),
    prefix: z.string().default('checked'),
    findings: z.array(z.string()).default([]),
    secret: z.string().default('s3cret'),
  });
  const audit = (read: (s: Record<string, unknown>) => unknown) =>
    graph('audit', { state: Files, reducers: { findings: append } })
      .node('list', () => undefined)
      .node('check', (s, ctx) => ({ findings: [`${s.prefix} ${ctx.item}`] }), {
        reads: ['prefix'],
        writes: ['findings'],
      })
      .node(
        'confirm',
        (s) => {
          read(s);
          return { findings: [`${s.findings.length} finding(s) so far`] };
        },
        { reads: ['findings'], writes: ['findings'] },
      )
      .node('collect', () => undefined)
      .map('list', { over: 'files', branch: 'check', join: 'collect' })
      .edge('check', 'confirm')
      .edge('confirm', 'collect')
      .edge('collect', END)
      .entry('list')
      .compile();

  it('a branch node sees its own branch’s updates through its view, never a sibling’s', async () => {
    const result = await run(
      audit(() => undefined),
      { files: ['a.ts', 'b.ts'] },
    );

    expect(result.status).toBe('succeeded');
    expect(result.state.findings).toEqual([
      'checked a.ts',
      '1 finding(s) so far',
      'checked b.ts',
      '1 finding(s) so far',
    ]);
  });

  it('a branch node reading an undeclared field fails its branch with READ_DENIED', async () => {
    const result = await run(
      audit((s) => s.secret),
      { files: ['a.ts'] },
    );

    expect(result.status).toBe('failed');
    expect(result.errors.map((e) => e.code)).toEqual(['READ_DENIED', 'JOIN_FAILED']);
    expect(result.errors[0]).toMatchObject({ node: 'confirm', activation: 'list:1[0]/confirm:1' });
  });
});

describe('writes: a node may update only the fields it declares', () => {
  it('an update naming a field outside writes fails the node with WRITE_DENIED and changes nothing', async () => {
    const g = single(() => ({ summary: 'fine', secret: 'overwritten' }), { writes: ['summary'] });

    const result = await run(g, { topic: 'tea' });

    expect(result.status).toBe('failed');
    expect(errorOf(result)).toMatchObject({
      code: 'WRITE_DENIED',
      class: 'permanent',
      message: 'node "work" wrote "secret" but declares writes [summary]',
      details: { field: 'secret' },
    });
    expect(result.trace.entries).toHaveLength(1);
    expect(result.state).toMatchObject({ summary: '', secret: 's3cret' });
  });

  it('a node without writes may write any field', async () => {
    const g = single(() => ({ summary: 'fine', secret: 'rotated' }));

    const result = await run(g, { topic: 'tea' });

    expect(result.state).toMatchObject({ summary: 'fine', secret: 'rotated' });
  });
});

describe('validate warns about branch nodes that declare no reads or no writes', () => {
  const fanOut = (options: { reads?: 'topic'[]; writes?: 'summary'[] }) =>
    graph('g', { state: State })
      .node('start', () => undefined)
      .node('a', () => undefined, options)
      .node('b', () => undefined, { reads: ['topic'], writes: ['notes'] })
      .node('pick', () => undefined, { join: any() })
      .node('after', () => undefined)
      .fanOut('start', ['a', 'b'], 'pick')
      .edge('a', 'pick')
      .edge('b', 'pick')
      .edge('pick', 'after')
      .edge('after', END)
      .entry('start');

  it('a branch node without reads or writes gets one warning for each, and the graph still compiles', () => {
    const builder = fanOut({});

    expect(builder.validate()).toEqual([
      expect.objectContaining({ code: 'READS_UNDECLARED', severity: 'warning', node: 'a' }),
      expect.objectContaining({ code: 'WRITES_UNDECLARED', severity: 'warning', node: 'a' }),
    ]);
    expect(() => builder.compile()).not.toThrow();
    expect(validate(builder.toDef()).map((d) => d.code)).toEqual([
      'READS_UNDECLARED',
      'WRITES_UNDECLARED',
    ]);
  });

  it('declaring both silences them; nodes outside the branches (start, join, after) are never warned about', () => {
    expect(fanOut({ reads: ['topic'], writes: ['summary'] }).validate()).toEqual([]);
    expect(
      fanOut({ reads: ['topic'] })
        .validate()
        .map((d) => d.code),
    ).toEqual(['WRITES_UNDECLARED']);
  });

  it('a sequential graph whose nodes declare nothing has no warnings', () => {
    const builder = graph('g', { state: State })
      .node('a', () => undefined)
      .node('b', () => undefined)
      .edge('a', 'b')
      .edge('b', END)
      .entry('a');

    expect(builder.validate()).toEqual([]);
  });

  it('a map branch without writes gets the warning and still its WRITE_CONFLICT error', () => {
    const builder = graph('g', { state: State })
      .node('list', () => undefined)
      .node('each', () => undefined, { reads: ['topic'] })
      .node('collect', () => undefined)
      .map('list', { over: 'notes', branch: 'each', join: 'collect' })
      .edge('each', 'collect')
      .edge('collect', END)
      .entry('list');

    expect(builder.validate().map((d) => `${d.severity} ${d.code}`)).toEqual([
      'error WRITE_CONFLICT',
      'warning WRITES_UNDECLARED',
    ]);
    expect(() => builder.compile()).toThrow(/GRAPH_INVALID: graph "g" has 1 problem\(s\)/);
  });
});
