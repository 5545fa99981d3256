/**
 * Every stable error code waymark can raise, one line each in docs/errors.md.
 * Codes are part of the public contract: renaming one is a breaking change.
 */
export const errorCodes = [
  // graph declaration and compile
  'GRAPH_INVALID',
  'DECLARATION_INVALID',
  // run input and node output
  'INPUT_INVALID',
  'CONTEXT_INVALID',
  'INPUT_NOT_ALLOWED',
  'OPTIONS_INVALID',
  'UPDATE_INVALID',
  // capabilities: reads and writes
  'READ_DENIED',
  'WRITE_DENIED',
  // routing and caps
  'ROUTE_UNDECLARED',
  'ROUTER_FAILED',
  'REDUCER_FAILED',
  'VISIT_CAP',
  'MAP_NOT_LIST',
  'MAP_TOO_LONG',
  'BOUND_OVER_BUDGET',
  'JOIN_FAILED',
  'STEP_LIMIT',
  // node failures
  'NODE_FAILED',
  'NODE_TIMEOUT',
  // effects
  'EFFECT_NAME_REUSED',
  'EFFECT_NAME_INVALID',
  'EFFECT_RESULT_INVALID',
  'REPORT_INVALID',
  // processes (ctx.exec)
  'EXEC_INVALID',
  'EXEC_DENIED',
  'EXEC_FAILED',
  'EXEC_TIMEOUT',
  'EXEC_ABORTED',
  'EXEC_OUTSIDE_WORKSPACE',
  // workspaces and patch joins
  'WORKSPACE_REPO_INVALID',
  'WORKSPACE_BASE_UNKNOWN',
  'WORKSPACE_FAILED',
  'MERGE_CONFLICT',
  // run-level stops
  'RUN_CANCELLED',
  'RUN_TIMEOUT',
  // stores and resume
  'RUN_EXISTS',
  'RUN_NOT_FOUND',
  'RUN_NOT_RESUMABLE',
  'RUN_NOT_DUE',
  'LIMIT_KEY_INVALID',
  'RUN_QUEUED',
  'RATE_LIMITED',
  'RUN_NOT_CANCELLABLE',
  'RUN_NOT_CONTINUABLE',
  'RUN_NOT_PATCHABLE',
  'RUN_DRAINED',
  'FOLD_FAILED',
  // deleting runs (retention)
  'RUN_LIVE',
  'RUN_WAITING',
  'RUN_REFERENCED',
  // one owner per run
  'RUN_OWNED',
  'LEASE_LOST',
  'STORE_CONFLICT',
  'STORE_CORRUPT',
  'STORE_UNAVAILABLE',
  'STORE_LIMIT',
  'STORE_VERSION_UNSUPPORTED',
  'GRAPH_MISMATCH',
  'GOTO_INVALID',
  'STATE_VERSION_UNKNOWN',
  'MIGRATION_FAILED',
  'WAIT_NOT_FOUND',
  'WAIT_ALREADY_ANSWERED',
  'WAIT_TIMED_OUT',
  'WAIT_EXPIRED',
  'WAIT_CLOSED',
  'ANSWER_INVALID',
  // external events (event nodes, signal())
  'SIGNAL_INVALID',
  'SIGNAL_UNKNOWN',
  // the memory store kept across runs (ctx.memory, memoryOf)
  'MEMORY_INVALID',
  // schedules (schedule(), waymark schedule)
  'SCHEDULE_INVALID',
  'SCHEDULE_NOT_FOUND',
  // the command line
  'USAGE_INVALID',
  'GRAPH_FILE_INVALID',
  // model calls (waymark/model)
  'MODEL_NAME_INVALID',
  'MODEL_PROVIDER_MISSING',
  'MODEL_KEY_MISSING',
  'MODEL_CALL_FAILED',
  'MODEL_OUTPUT_INVALID',
  'MODEL_PRICE_MISSING',
  'BUDGET_EXCEEDED',
  'SCRIPT_EXHAUSTED',
  'CASSETTE_MISS',
  'CASSETTE_INVALID',
  // MCP tools of agent nodes (waymark/model)
  'MCP_CLIENT_MISSING',
  'MCP_SERVER_FAILED',
  'MCP_TOOL_DENIED',
  'MCP_TOOL_UNKNOWN',
  // the HTTP API (waymark serve)
  'AUTH_REQUIRED',
  'REQUEST_TOO_LARGE',
  'GRAPH_NOT_SERVED',
] as const;

/** A stable, documented error code. */
export type ErrorCode = (typeof errorCodes)[number];

/**
 * How an error value is classified; retry policies and reports switch on this, never on messages.
 * - transient: may succeed if tried again (the default for an exception a node throws)
 * - permanent: will fail the same way again (bad output, a WaymarkError marked not retryable)
 * - timeout: the node or the run ran out of time
 * - cap: a visit cap or step limit stopped a loop
 * - budget: a token, cost or turn budget was spent
 * - check: output failed its deterministic check
 */
export type ErrorClass = 'transient' | 'permanent' | 'timeout' | 'cap' | 'budget' | 'check';
