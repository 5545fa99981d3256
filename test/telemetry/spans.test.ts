import { SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  answer,
  any,
  END,
  graph,
  MemoryStore,
  permanentError,
  person,
  resume,
  run,
} from '../../src/index.js';
import { otel } from '../../src/otel.js';
import { storedTraceparent } from '../../src/runtime/watch/trace-context.js';
import { dyingAt } from '../support/stores.js';
import { activationsOf, childrenOf, segments, tracing, withContextManager } from './tracing.js';

const Doc = z.object({
  topic: z.string(),
  notes: z.string().default(''),
  summary: z.string().default(''),
  published: z.boolean().default(false),
});

/** fetch -> summarize (-> publish, in the edited graph). */
function docGraph(withPublish: boolean) {
  const b = graph('doc', { state: Doc })
    .node('fetch', (s) => ({ notes: `notes on ${s.topic}` }), { reads: ['topic'] })
    .node('summarize', (s) => ({ summary: s.notes.toUpperCase() }), { reads: ['notes'] })
    .edge('fetch', 'summarize')
    .entry('fetch');
  if (!withPublish) return b.edge('summarize', END).compile();
  return b
    .node('publish', () => ({ published: true }), { reads: ['summary'] })
    .edge('summarize', 'publish')
    .edge('publish', END)
    .compile();
}

const names = (spans: readonly ReadableSpan[]) => spans.map((s) => s.name);
const everyAttribute = (spans: readonly ReadableSpan[]) =>
  spans.flatMap((s) => [
    ...Object.keys(s.attributes),
    ...s.events.flatMap((e) => Object.keys(e.attributes ?? {})),
  ]);

describe('spans of runs', () => {
  it('a node reused by its input hash is an event on its segment, never a span as if it ran', async () => {
    const store = new MemoryStore();
    const t = tracing();
    const first = await run(docGraph(false), { topic: 'otel' }, { store });

    const second = await run(
      docGraph(true),
      { topic: 'otel' },
      { store, reuseFrom: first.runId, telemetry: t.telemetry },
    );

    expect(second.trace.entries.filter((e) => e.reused).map((e) => e.node)).toEqual([
      'fetch',
      'summarize',
    ]);
    const [segment] = segments(t.spans());
    expect(names(activationsOf(t.spans(), segment!))).toEqual(['invoke_node publish']);
    const reused = segment!.events.filter((e) => e.name === 'waymark.activation.reused');
    expect(reused.map((e) => e.attributes?.['waymark.node'])).toEqual(['fetch', 'summarize']);
    expect(segment!.attributes['waymark.segment.reused']).toBe(2);
  });

  it('a failed attempt has status ERROR with its code; one that is tried again says so', async () => {
    let calls = 0;
    const g = graph('flaky', { state: Doc })
      .node(
        'fetch',
        () => {
          calls++;
          if (calls === 1) throw new Error('connection reset');
          throw permanentError('the topic does not exist');
        },
        { retry: { attempts: 2, backoffMs: 1 } },
      )
      .edge('fetch', END)
      .entry('fetch')
      .compile();
    const t = tracing();

    const result = await run(g, { topic: 'x' }, { telemetry: t.telemetry });

    expect(result.status).toBe('failed');
    const [segment] = segments(t.spans());
    const [one, two] = activationsOf(t.spans(), segment!);
    expect(one!.attributes).toMatchObject({
      'waymark.attempt': 1,
      'waymark.status': 'failed',
      'waymark.retrying': true,
      'error.type': 'NODE_FAILED',
      'waymark.error.class': 'transient',
    });
    expect(one!.status).toEqual({
      code: SpanStatusCode.ERROR,
      message: 'NODE_FAILED: connection reset',
    });
    expect(two!.attributes).toMatchObject({
      'waymark.attempt': 2,
      'error.type': 'NODE_FAILED',
      'waymark.error.class': 'permanent',
    });
    expect(two!.attributes['waymark.retrying']).toBeUndefined();
    expect(segment!.status.code).toBe(SpanStatusCode.ERROR);
    expect(segment!.status.message).toContain('the topic does not exist');
    expect(segment!.attributes).toMatchObject({
      'waymark.run.status': 'failed',
      'error.type': 'NODE_FAILED',
      'waymark.error.class': 'permanent',
    });
  });

  it('a cap that stops the run is an event on its segment, and the segment ends in ERROR', async () => {
    const g = graph('loop', { state: Doc })
      .node('again', (s) => ({ notes: `${s.notes}.` }), { visits: 2 })
      .route('again', () => 'again', ['again', END])
      .entry('again')
      .compile();
    const t = tracing();

    const result = await run(g, { topic: 'x' }, { telemetry: t.telemetry });

    expect(result.status).toBe('failed');
    const [segment] = segments(t.spans());
    expect(segment!.events.map((e) => [e.name, e.attributes?.['waymark.cap.hit']])).toEqual([
      ['waymark.cap.hit', 'VISIT_CAP'],
    ]);
    expect(segment!.attributes['waymark.cap.hit']).toBe('VISIT_CAP');
    expect(segment!.status.code).toBe(SpanStatusCode.ERROR);
    expect(names(activationsOf(t.spans(), segment!))).toEqual([
      'invoke_node again',
      'invoke_node again',
    ]);
  });

  it('the losers of an any() join end cancelled, not failed, and the join is released once', async () => {
    const mirror = (ms: number) => async () => {
      await new Promise((r) => setTimeout(r, ms));
      return { notes: `after ${ms} ms` };
    };
    const g = graph('race', { state: Doc })
      .node('ask', () => ({}))
      .node('slow', mirror(40))
      .node('fast', mirror(1))
      .node('first', () => ({}), { join: any() })
      .fanOut('ask', ['slow', 'fast'], 'first')
      .edge('slow', 'first')
      .edge('fast', 'first')
      .edge('first', END)
      .entry('ask')
      .compile();
    const t = tracing();

    const result = await run(g, { topic: 'x' }, { telemetry: t.telemetry });

    expect(result.status).toBe('succeeded');
    const [segment] = segments(t.spans());
    const byName = (name: string) => t.spans().find((s) => s.name === name)!;
    expect(byName('invoke_node slow').attributes['waymark.status']).toBe('cancelled');
    expect(byName('invoke_node slow').status.code).toBe(SpanStatusCode.UNSET);
    expect(byName('invoke_node fast').attributes['waymark.status']).toBe('succeeded');
    expect(byName('invoke_node first').attributes).toMatchObject({
      'waymark.join.merged': 1,
      'waymark.join.cancelled': 1,
    });
    expect(segment!.events.map((e) => e.name)).toEqual(['waymark.join.released']);
  });

  describe('content', () => {
    const ask = () =>
      graph('ask', { state: Doc })
        .node('fetch', (s) => ({ notes: `secret notes on ${s.topic}` }))
        .node(
          'approve',
          person({
            prompt: (s) => `Publish "${s.notes}"?`,
            answer: z.object({ ok: z.boolean() }),
            update: (a) => ({ published: a.ok }),
          }),
        )
        .edge('fetch', 'approve')
        .edge('approve', END)
        .entry('fetch')
        .compile();

    async function traced(content: boolean | undefined) {
      const store = new MemoryStore();
      const t = tracing(content === undefined ? {} : { content });
      const g = ask();
      await run(g, { topic: 'pricing' }, { store, runId: 'r', telemetry: t.telemetry });
      await answer(store, 'r', 'r/approve:1', { ok: true }, { by: 'me' });
      await resume(store, g, 'r', { telemetry: t.telemetry });
      return t.spans();
    }

    it('is off by default: no update, prompt or answer in any span or event', async () => {
      const spans = await traced(undefined);

      expect(segments(spans)).toHaveLength(2);
      const keys = everyAttribute(spans);
      expect(keys.filter((k) => /update|prompt|answer$/.test(k))).toEqual([]);
      expect(JSON.stringify(spans.map((s) => [s.attributes, s.events]))).not.toContain('secret');
    });

    it('with content: true, updates, prompts and answers are recorded', async () => {
      const spans = await traced(true);

      const fetch = spans.find((s) => s.name === 'invoke_node fetch')!;
      expect(JSON.parse(String(fetch.attributes['waymark.update']))).toEqual({
        notes: 'secret notes on pricing',
      });
      const [one, two] = segments(spans);
      const opened = one!.events.find((e) => e.name === 'waymark.wait.opened')!;
      expect(opened.attributes?.['waymark.wait.prompt']).toBe('Publish "secret notes on pricing"?');
      const answered = two!.events.find((e) => e.name === 'waymark.wait.answered')!;
      expect(answered.attributes?.['waymark.wait.answer']).toBe('{"ok":true}');
    });
  });

  it('a resume nobody traces keeps the trace context it found: the next traced segment links past it', async () => {
    const store = new MemoryStore();
    const t = tracing();
    const ok = z.object({ ok: z.boolean() });
    const g = graph('two-gates', { state: Doc })
      .node('first', person({ prompt: 'first?', answer: ok, update: () => ({}) }))
      .node('second', person({ prompt: 'second?', answer: ok, update: () => ({}) }))
      .edge('first', 'second')
      .edge('second', END)
      .entry('first')
      .compile();

    await run(g, { topic: 'x' }, { store, runId: 'g', telemetry: t.telemetry });
    await answer(store, 'g', 'g/first:1', { ok: true }, { by: 'me' });
    const untraced = await resume(store, g, 'g');
    expect(untraced.status).toBe('waiting');
    await answer(store, 'g', 'g/second:1', { ok: true }, { by: 'me' });
    await resume(store, g, 'g', { telemetry: t.telemetry });

    const [one, three, ...more] = segments(t.spans());
    expect(more).toEqual([]);
    expect(three!.links.map((l) => l.context.spanId)).toEqual([one!.spanContext().spanId]);
  });

  it('a drive that dies mid-run ends its segment in ERROR, its unrecorded attempt abandoned; the resume links to it', async () => {
    const store = new MemoryStore();
    const t = tracing();
    const g = graph('three', { state: Doc })
      .node('a', () => ({ notes: 'a' }))
      .node('b', () => ({ notes: 'b' }))
      .node('c', () => ({ notes: 'c' }))
      .edge('a', 'b')
      .edge('b', 'c')
      .edge('c', END)
      .entry('a')
      .compile();

    // Commit 3 (b's completion) never lands: the process died, as far as the store can tell.
    const died = run(
      g,
      { topic: 'x' },
      { store: dyingAt(store, 3), runId: 'd', telemetry: t.telemetry },
    );
    await expect(died).rejects.toThrow('the process died');
    const resumed = await resume(store, g, 'd', { telemetry: t.telemetry });

    expect(resumed.status).toBe('succeeded');
    const [dead, next] = segments(t.spans());
    expect(dead!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'the process died' });
    expect(dead!.attributes).toMatchObject({
      'error.type': 'Error',
      'waymark.run.status': 'running',
    });
    const b = activationsOf(t.spans(), dead!).find((s) => s.name === 'invoke_node b')!;
    expect(b.attributes['waymark.status']).toBe('abandoned');
    // It died before any snapshot was due, yet its context was stored with its first commit.
    expect(next!.links.map((l) => l.context.spanId)).toEqual([dead!.spanContext().spanId]);
    expect(names(activationsOf(t.spans(), next!))).toEqual(['invoke_node b', 'invoke_node c']);
  });

  describe('with a context manager', () => {
    let undo: () => void;
    beforeAll(() => {
      undo = withContextManager();
    });
    afterAll(() => undo());

    it("a node body runs inside its attempt's span: what it traces nests under the attempt", async () => {
      const t = tracing();
      const tracer = t.tracerProvider.getTracer('user-code');
      const g = graph('nested', { state: Doc })
        .node('fetch', async () => {
          await new Promise((r) => setTimeout(r, 1));
          tracer.startSpan('http GET /notes').end();
          return { notes: 'n' };
        })
        .edge('fetch', END)
        .entry('fetch')
        .compile();

      await run(g, { topic: 'x' }, { telemetry: t.telemetry });

      const attempt = t.spans().find((s) => s.name === 'invoke_node fetch')!;
      expect(names(childrenOf(t.spans(), attempt))).toEqual(['http GET /notes']);
    });

    it("a run started inside a caller's span is that span's child", async () => {
      const t = tracing();
      const caller = t.tracerProvider.getTracer('caller');

      await caller.startActiveSpan('handle request', async (span) => {
        await run(docGraph(false), { topic: 'x' }, { telemetry: t.telemetry });
        span.end();
      });

      const request = t.spans().find((s) => s.name === 'handle request')!;
      expect(names(childrenOf(t.spans(), request))).toEqual(['invoke_workflow doc']);
    });
  });

  it('with no tracer provider registered, otel() records nothing and stores no trace context', async () => {
    const store = new MemoryStore();
    expect(trace.getTracerProvider().getTracer('probe').startSpan('x').isRecording()).toBe(false);

    const result = await run(docGraph(false), { topic: 'x' }, { store, telemetry: otel() });

    expect(result.status).toBe('succeeded');
    const loaded = await store.loadRun(result.runId);
    expect(storedTraceparent(loaded!.snapshot.data)).toBeUndefined();
  });
});
