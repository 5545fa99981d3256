// The names of the attributes and events waymark's spans carry. `gen_ai.*` follow the
// OpenTelemetry GenAI conventions (development status); the rest are waymark's own, under
// `waymark.`. docs/telemetry.md lists every one; a rename here is a breaking change there.

/** GenAI semantic convention attributes used by waymark's spans. */
export const genAi = {
  operation: 'gen_ai.operation.name',
  workflow: 'gen_ai.workflow.name',
  node: 'gen_ai.node.name',
  agent: 'gen_ai.agent.name',
  provider: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  toolName: 'gen_ai.tool.name',
  errorType: 'error.type',
} as const;

/** waymark's own attributes. */
export const wm = {
  runId: 'waymark.run.id',
  runStatus: 'waymark.run.status',
  runSteps: 'waymark.run.steps',
  graph: 'waymark.graph.name',
  graphHash: 'waymark.graph.hash',
  graphVersion: 'waymark.graph.version',
  cause: 'waymark.segment.cause',
  readBack: 'waymark.segment.read_back',
  reusedCount: 'waymark.segment.reused',
  link: 'waymark.link',
  activation: 'waymark.activation.id',
  parent: 'waymark.activation.parent',
  node: 'waymark.node',
  kind: 'waymark.node.kind',
  attempt: 'waymark.attempt',
  status: 'waymark.status',
  retrying: 'waymark.retrying',
  durationMs: 'waymark.duration_ms',
  fanOut: 'waymark.fan_out',
  branch: 'waymark.branch.index',
  route: 'waymark.route',
  joinMerged: 'waymark.join.merged',
  joinSucceeded: 'waymark.join.succeeded',
  joinFailed: 'waymark.join.failed',
  joinCancelled: 'waymark.join.cancelled',
  waitAnswered: 'waymark.wait.answered',
  requestId: 'waymark.wait.request_id',
  prompt: 'waymark.wait.prompt',
  answer: 'waymark.wait.answer',
  capHit: 'waymark.cap.hit',
  capMessage: 'waymark.cap.message',
  errorClass: 'waymark.error.class',
  costUsd: 'waymark.usage.cost_usd',
  turn: 'waymark.turn',
  update: 'waymark.update',
  worker: 'waymark.worker.id',
  recorded: 'waymark.recorded',
} as const;

/** The span events waymark adds. */
export const events = {
  reused: 'waymark.activation.reused',
  waitOpened: 'waymark.wait.opened',
  waitAnswered: 'waymark.wait.answered',
  joinReleased: 'waymark.join.released',
  capHit: 'waymark.cap.hit',
  toolCall: 'execute_tool',
} as const;
