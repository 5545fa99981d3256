import {
  type Attributes,
  type Context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { NodeKind } from '../graph/kinds.js';
import { declaredActivation } from '../graph/subgraph.js';
import type { Usage } from '../graph/types.js';
import type { Activation } from '../runtime/core/snapshot.js';
import type { AttemptEnded } from '../runtime/watch/telemetry.js';
import type { TraceEntry } from '../runtime/watch/trace.js';
import { events, genAi, wm } from './attributes.js';

/** What an activation's span is called: a model node is an agent (GenAI), the rest nodes. */
export function operationOf(kind: NodeKind): 'invoke_agent' | 'invoke_node' {
  return kind === 'model' ? 'invoke_agent' : 'invoke_node';
}

/** The attributes an activation's span starts with: who it is, in which run. */
export function activationAttributes(
  runId: string,
  activation: Pick<Activation, 'id' | 'node' | 'attempt' | 'parent' | 'branch' | 'join'>,
  kind: NodeKind,
): Attributes {
  const operation = operationOf(kind);
  const attributes: Attributes = {
    [genAi.operation]: operation,
    [operation === 'invoke_agent' ? genAi.agent : genAi.node]: activation.node,
    [wm.runId]: runId,
    [wm.activation]: activation.id,
    [wm.node]: activation.node,
    [wm.kind]: kind,
    [wm.attempt]: activation.attempt,
  };
  if (activation.parent !== null) attributes[wm.parent] = declaredActivation(activation.parent);
  if (activation.branch !== undefined) {
    attributes[wm.fanOut] = activation.branch.fanOut;
    attributes[wm.branch] = activation.branch.index;
  }
  const { join } = activation;
  if (join !== undefined) {
    attributes[wm.joinMerged] = join.merged.length;
    attributes[wm.joinSucceeded] = join.succeeded.length;
    attributes[wm.joinFailed] = join.failed.length;
    attributes[wm.joinCancelled] = join.cancelled.length;
  }
  return attributes;
}

/** What an attempt's span ends with: its outcome, route, usage, its turns as `chat` spans. */
export function endActivationSpan(
  tracer: Tracer,
  span: Span,
  context: Context,
  startedAt: number,
  entry: TraceEntry,
  ended: AttemptEnded,
  content: boolean,
): void {
  span.setAttribute(wm.status, entry.status);
  span.setAttribute(wm.durationMs, entry.durationMs);
  if (entry.retried) span.setAttribute(wm.retrying, true);
  if (ended.route !== undefined) span.setAttribute(wm.route, [...ended.route]);
  if (entry.usage !== undefined) span.setAttributes(usageAttributes(entry.usage));
  if (content && ended.update !== undefined) span.setAttribute(wm.update, json(ended.update));
  if (entry.turns !== undefined) {
    const parent = trace.setSpan(context, span);
    let at = startedAt;
    for (const turn of entry.turns) {
      const model = turn.usage?.model ?? entry.usage?.model;
      const chat = tracer.startSpan(
        `chat${model === undefined ? '' : ` ${modelId(model)}`}`,
        {
          kind: SpanKind.CLIENT,
          startTime: at,
          attributes: {
            [genAi.operation]: 'chat',
            [wm.turn]: turn.turn,
            ...(turn.usage !== undefined &&
              usageAttributes(model === undefined ? turn.usage : { ...turn.usage, model })),
          },
        },
        parent,
      );
      // Tools run inside the turn and are not timed apart from it: events, not spans.
      for (const tool of turn.toolCalls ?? [])
        chat.addEvent(events.toolCall, { [genAi.toolName]: tool });
      at += turn.durationMs;
      chat.end(at);
    }
  }
  const { error } = entry;
  if (error !== undefined) {
    span.setAttribute(genAi.errorType, error.code);
    span.setAttribute(wm.errorClass, error.class);
    if (entry.status === 'failed')
      span.setStatus({ code: SpanStatusCode.ERROR, message: `${error.code}: ${error.message}` });
  }
  span.end();
}

/** `provider:model-id` as the GenAI attributes split it. */
function usageAttributes(usage: Usage): Attributes {
  const attributes: Attributes = {
    [genAi.inputTokens]: usage.inputTokens,
    [genAi.outputTokens]: usage.outputTokens,
  };
  if (usage.model !== undefined) {
    const colon = usage.model.indexOf(':');
    if (colon > 0) attributes[genAi.provider] = usage.model.slice(0, colon);
    attributes[genAi.requestModel] = modelId(usage.model);
  }
  if (usage.costUsd !== undefined) attributes[wm.costUsd] = usage.costUsd;
  return attributes;
}

function modelId(model: string): string {
  const colon = model.indexOf(':');
  return colon > 0 ? model.slice(colon + 1) : model;
}

/** Content as an attribute value: JSON, or a placeholder for what JSON cannot hold. */
export function json(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    return '[unserializable]';
  }
}
