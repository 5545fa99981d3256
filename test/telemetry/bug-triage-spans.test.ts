import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import triage from '../../examples/bug-triage/graph.js';
import { answer, loadTrace, MemoryStore, resume, run, type TraceEntry } from '../../src/index.js';
import { storedTraceparent } from '../../src/runtime/watch/trace-context.js';
import { activationsOf, childrenOf, countBy, segments, tracing } from './tracing.js';

// The bug-triage example's model nodes: their attempts are `invoke_agent` spans.
const modelNodes = new Set(['triage', 'fix-code', 'update-tests']);
const spanNameOf = (e: TraceEntry) =>
  `${modelNodes.has(e.node) ? 'invoke_agent' : 'invoke_node'} ${e.node}`;
const attr = (span: ReadableSpan, name: string) => span.attributes[name];
const idOf = (span: ReadableSpan) =>
  `${String(attr(span, 'waymark.activation.id'))}#${String(attr(span, 'waymark.attempt'))}`;

describe('the spans of a bug-triage run', () => {
  it('are one invoke_workflow span with one child per attempt of its trace, named by what the node is', async () => {
    const t = tracing();

    const result = await run(triage, { bug: 'search-pagination' }, { telemetry: t.telemetry });

    expect(result.status).toBe('succeeded');
    const [segment, ...more] = segments(t.spans());
    expect(more).toEqual([]);
    expect(segment!.name).toBe('invoke_workflow bug-triage');
    expect(segment!.parentSpanContext).toBeUndefined();
    expect(segment!.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_workflow',
      'waymark.run.id': result.runId,
      'waymark.graph.name': 'bug-triage',
      'waymark.graph.hash': triage.hash,
      'waymark.segment.cause': 'started',
      'waymark.run.status': 'succeeded',
      'waymark.run.steps': 8,
    });
    const activations = activationsOf(t.spans(), segment!);
    const { entries } = result.trace;
    expect(countBy(activations, (s) => s.name)).toEqual(countBy(entries, spanNameOf));
    expect(activations.map(idOf).sort()).toEqual(
      entries.map((e) => `${e.activation}#${e.attempt}`).sort(),
    );
    for (const entry of entries) {
      const span = activations.find((s) => idOf(s) === `${entry.activation}#${entry.attempt}`)!;
      expect(span.attributes).toMatchObject({
        'waymark.run.id': result.runId,
        'waymark.node': entry.node,
        'waymark.status': entry.status,
        'waymark.duration_ms': entry.durationMs,
      });
      if (entry.parent !== null) expect(attr(span, 'waymark.activation.parent')).toBe(entry.parent);
    }
    // Nothing but activations hangs under the segment: model calls hang under their agent.
    expect(childrenOf(t.spans(), segment!)).toHaveLength(entries.length);
  });

  it('tell the route a router took, the fan-out branch, the join it released and each model call with its tokens', async () => {
    const t = tracing();

    const result = await run(triage, { bug: 'search-pagination' }, { telemetry: t.telemetry });

    const [segment] = segments(t.spans());
    const byNode = (node: string) =>
      activationsOf(t.spans(), segment!).filter((s) => attr(s, 'waymark.node') === node);
    expect(attr(byNode('reproduce')[0]!, 'waymark.route')).toEqual(['plan-fix']);
    expect(attr(byNode('verify')[0]!, 'waymark.route')).toEqual(['done']);
    expect(attr(byNode('triage')[0]!, 'waymark.route')).toBeUndefined(); // a static edge
    expect(byNode('fix-code')[0]!.attributes).toMatchObject({
      'waymark.fan_out': 'plan-fix:1',
      'waymark.branch.index': 0,
    });
    expect(byNode('merge')[0]!.attributes).toMatchObject({
      'waymark.join.merged': 2,
      'waymark.join.failed': 0,
    });
    expect(segment!.events.map((e) => e.name)).toEqual(['waymark.join.released']);

    const agent = byNode('fix-code')[0]!;
    const usage = result.trace.entries.find((e) => e.node === 'fix-code')!.usage!;
    expect(agent.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'fix-code',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'bug-triage',
      'gen_ai.usage.input_tokens': usage.inputTokens,
      'gen_ai.usage.output_tokens': usage.outputTokens,
    });
    const [chat, ...others] = childrenOf(t.spans(), agent);
    expect(others).toEqual([]);
    expect(chat!.name).toBe('chat bug-triage');
    expect(chat!.kind).toBe(SpanKind.CLIENT);
    expect(chat!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.usage.input_tokens': usage.inputTokens,
      'gen_ai.usage.output_tokens': usage.outputTokens,
    });
  });

  it('count a loop per visit and mark the visit cap an onError route handled', async () => {
    const t = tracing();

    const result = await run(triage, { bug: 'webhook-down' }, { telemetry: t.telemetry });

    expect(result.errors.map((e) => e.code)).toEqual(['VISIT_CAP']);
    const [segment] = segments(t.spans());
    const activations = activationsOf(t.spans(), segment!);
    expect(countBy(activations, (s) => String(attr(s, 'waymark.node')))).toEqual(
      countBy(result.trace.entries, (e) => e.node),
    );
    expect(countBy(activations, (s) => String(attr(s, 'waymark.node'))).reproduce).toBe(3);
    const cap = segment!.events.find((e) => e.name === 'waymark.cap.hit');
    expect(cap?.attributes).toMatchObject({
      'waymark.cap.hit': 'VISIT_CAP',
      'waymark.node': 'reproduce',
    });
    // Handled by a route, the cap did not fail the run.
    expect(segment!.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('across a wait and a resume: two segments, the second linked to the first, and nothing the first ran emitted again', async () => {
    const store = new MemoryStore();
    const t = tracing();

    const first = await run(
      triage,
      { bug: 'billing-rounding' },
      { store, runId: 'bill-1', telemetry: t.telemetry },
    );
    expect(first.status).toBe('waiting');
    const [one] = segments(t.spans());
    expect(one!.attributes['waymark.run.status']).toBe('waiting');
    const opened = one!.events.find((e) => e.name === 'waymark.wait.opened');
    expect(opened?.attributes).toMatchObject({
      'waymark.wait.request_id': 'bill-1/approve:1',
      'waymark.node': 'approve',
    });
    // The waiting run keeps the first segment's trace context with its checkpoint.
    const { traceId, spanId } = one!.spanContext();
    const stored = storedTraceparent((await store.loadRun('bill-1'))!.snapshot.data);
    expect(stored).toBe(`00-${traceId}-${spanId}-01`);

    await answer(store, 'bill-1', 'bill-1/approve:1', { approved: true }, { by: 'finance-lead' });
    const done = await resume(store, triage, 'bill-1', { telemetry: t.telemetry });

    expect(done.status).toBe('succeeded');
    const [, two, ...more] = segments(t.spans());
    expect(more).toEqual([]);
    expect(two!.links.map((l) => l.context.spanId)).toEqual([spanId]);
    expect(two!.links[0]!.context.traceId).toBe(traceId);
    expect(two!.attributes).toMatchObject({
      'waymark.segment.cause': 'answered',
      'waymark.segment.read_back': first.steps,
      'waymark.run.status': 'succeeded',
    });
    expect(two!.events.map((e) => e.name)).toEqual(['waymark.wait.answered']);
    const second = activationsOf(t.spans(), two!);
    expect(second.map((s) => s.name)).toEqual(['invoke_node approve', 'invoke_node done']);
    expect(second[0]!.attributes['waymark.wait.answered']).toBe(true);
    // Over both segments, one span per attempt of the whole history: none twice.
    const all = [...activationsOf(t.spans(), one!), ...second];
    const history = await loadTrace(store, 'bill-1');
    expect(all.map(idOf).sort()).toEqual(
      history.entries.map((e) => `${e.activation}#${e.attempt}`).sort(),
    );
    expect(countBy(all, (s) => s.name)).toEqual(countBy(history.entries, spanNameOf));
  });
});
