import {
  type Attributes,
  type Context,
  context,
  type Link,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { ErrorValue } from '../error/error-value.js';
import { isWaymarkError } from '../error/waymark-error.js';
import type { NodeKind } from '../graph/kinds.js';
import type { JoinSummary } from '../graph/types.js';
import type { Activation } from '../runtime/core/snapshot.js';
import type {
  AttemptEnded,
  AttemptScope,
  SegmentEnd,
  SegmentStart,
  SegmentTelemetry,
} from '../runtime/watch/telemetry.js';
import type { TraceEntry } from '../runtime/watch/trace.js';
import { activationAttributes, endActivationSpan, json, operationOf } from './activation-span.js';
import { events, genAi, wm } from './attributes.js';
import { formatTraceparent, parseTraceparent } from './traceparent.js';

interface OpenAttempt {
  readonly span: Span;
  readonly context: Context;
  /** Wall-clock ms: where the attempt's turns start. */
  readonly startedAt: number;
}

/**
 * One drive of a run as an `invoke_workflow {graph}` span, with a child span per attempt that
 * ran in it. Starts under the caller's active context; links to the segment before it.
 */
export class OtelSegment implements SegmentTelemetry {
  readonly traceparent: string | undefined;
  readonly #tracer: Tracer;
  readonly #span: Span;
  readonly #context: Context;
  readonly #runId: string;
  readonly #content: boolean;
  readonly #open = new Map<string, OpenAttempt>();
  readonly #answered = new Set<string>();
  #reused = 0;

  /** Starts the segment's span; undefined when the tracer records nothing (no provider). */
  static start(tracer: Tracer, start: SegmentStart, content: boolean): OtelSegment | undefined {
    const previous = start.previous === undefined ? undefined : parseTraceparent(start.previous);
    const links: Link[] =
      previous === undefined ? [] : [{ context: previous, attributes: { [wm.link]: 'previous' } }];
    const span = tracer.startSpan(
      `invoke_workflow ${start.graph.name}`,
      {
        kind: SpanKind.INTERNAL,
        links,
        attributes: {
          [genAi.operation]: 'invoke_workflow',
          [genAi.workflow]: start.graph.name,
          [wm.runId]: start.runId,
          [wm.graph]: start.graph.name,
          [wm.graphHash]: start.graph.hash,
          [wm.graphVersion]: start.graph.version,
          [wm.cause]: start.cause,
          [wm.readBack]: start.readBack,
        },
      },
      context.active(),
    );
    if (!span.isRecording()) return undefined;
    return new OtelSegment(tracer, span, start.runId, content);
  }

  private constructor(tracer: Tracer, span: Span, runId: string, content: boolean) {
    this.#tracer = tracer;
    this.#span = span;
    this.#context = trace.setSpan(context.active(), span);
    this.#runId = runId;
    this.#content = content;
    this.traceparent = formatTraceparent(span.spanContext());
  }

  attemptStarted(activation: Activation, kind: NodeKind): AttemptScope {
    const span = this.#tracer.startSpan(
      `${operationOf(kind)} ${activation.node}`,
      { kind: SpanKind.INTERNAL, attributes: activationAttributes(this.#runId, activation, kind) },
      this.#context,
    );
    const scope = trace.setSpan(this.#context, span);
    this.#open.set(keyOf(activation.id, activation.attempt), {
      span,
      context: scope,
      startedAt: Date.now(),
    });
    return { within: (body) => context.with(scope, body) };
  }

  attemptEnded(entry: TraceEntry, ended: AttemptEnded): void {
    const key = keyOf(entry.activation, entry.attempt);
    let open = this.#open.get(key);
    this.#open.delete(key);
    // An answered wait completes without an attempt having started: its span is the answer.
    if (open === undefined) {
      const span = this.#tracer.startSpan(
        `${operationOf(ended.kind)} ${entry.node}`,
        {
          kind: SpanKind.INTERNAL,
          attributes: activationAttributes(
            this.#runId,
            {
              id: entry.activation,
              node: entry.node,
              attempt: entry.attempt,
              parent: entry.parent,
            },
            ended.kind,
          ),
        },
        this.#context,
      );
      open = { span, context: this.#context, startedAt: Date.now() };
    }
    if (this.#answered.delete(entry.activation)) open.span.setAttribute(wm.waitAnswered, true);
    endActivationSpan(
      this.#tracer,
      open.span,
      this.#context,
      open.startedAt,
      entry,
      ended,
      this.#content,
    );
  }

  reused(entry: TraceEntry): void {
    this.#reused++;
    this.#span.addEvent(events.reused, {
      [wm.activation]: entry.activation,
      [wm.node]: entry.node,
      [wm.attempt]: entry.attempt,
    });
  }

  waitOpened(wait: { activation: string; node: string; requestId: string; prompt: string }): void {
    const attributes: Attributes = {
      [wm.activation]: wait.activation,
      [wm.node]: wait.node,
      [wm.requestId]: wait.requestId,
    };
    if (this.#content) attributes[wm.prompt] = wait.prompt;
    this.#span.addEvent(events.waitOpened, attributes);
  }

  waitAnswered(wait: { activation: string; answer: unknown }): void {
    this.#answered.add(wait.activation);
    const attributes: Attributes = { [wm.activation]: wait.activation };
    if (this.#content) attributes[wm.answer] = json(wait.answer);
    this.#span.addEvent(events.waitAnswered, attributes);
  }

  joinReleased(join: { activation: string; node: string; join: JoinSummary }): void {
    this.#span.addEvent(events.joinReleased, {
      [wm.activation]: join.activation,
      [wm.node]: join.node,
      [wm.joinMerged]: join.join.merged.length,
      [wm.joinSucceeded]: join.join.succeeded.length,
      [wm.joinFailed]: join.join.failed.length,
      [wm.joinCancelled]: join.join.cancelled.length,
    });
  }

  capHit(cap: ErrorValue): void {
    this.#span.setAttribute(wm.capHit, cap.code);
    this.#span.addEvent(events.capHit, {
      [wm.capHit]: cap.code,
      [wm.capMessage]: cap.message,
      [wm.node]: cap.node,
      [wm.activation]: cap.activation,
    });
  }

  ended(end: SegmentEnd): void {
    // Attempts still open were in flight when the drive stopped without recording them.
    for (const { span } of this.#open.values()) {
      span.setAttribute(wm.status, 'abandoned');
      span.end();
    }
    this.#open.clear();
    const span = this.#span;
    span.setAttribute(wm.runStatus, end.status);
    span.setAttribute(wm.runSteps, end.steps);
    if (this.#reused > 0) span.setAttribute(wm.reusedCount, this.#reused);
    if (end.thrown !== undefined) {
      const { thrown } = end;
      const code = isWaymarkError(thrown) ? thrown.code : 'Error';
      const message = thrown instanceof Error ? thrown.message : String(thrown);
      span.setAttribute(genAi.errorType, code);
      span.setStatus({ code: SpanStatusCode.ERROR, message });
    } else if (end.error !== undefined && end.status !== 'cancelled') {
      span.setAttribute(genAi.errorType, end.error.code);
      span.setAttribute(wm.errorClass, end.error.class);
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: `${end.error.code}: ${end.error.message}`,
      });
    }
    span.end();
  }
}

function keyOf(activation: string, attempt: number): string {
  return `${activation}#${attempt}`;
}
