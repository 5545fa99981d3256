// The API's answers as the page reads them (docs/server.md): the wire format, JSON only. The page
// imports nothing from the rest of src/ (it runs in a browser), so these mirror the server's.
// Points in time are ISO 8601 strings (`Iso`), as the API writes them; `msOf` reads one.

/** A point in time as the API writes it: ISO 8601 in UTC. */
export type Iso = string;

export type RunStatus = 'running' | 'waiting' | 'succeeded' | 'failed' | 'cancelled' | 'timed_out';

export const runStatuses: readonly RunStatus[] = [
  'running',
  'waiting',
  'succeeded',
  'failed',
  'cancelled',
  'timed_out',
];

export interface RunSummary {
  readonly runId: string;
  readonly graph: string;
  readonly graphHash: string;
  readonly status: RunStatus;
  readonly seq: number;
  readonly createdAt: Iso;
  readonly updatedAt: Iso;
  readonly labels: Readonly<Record<string, string>>;
}

export interface RunPage {
  readonly runs: readonly RunSummary[];
  readonly next: string | null;
}

export interface ErrorValue {
  readonly code: string;
  readonly class?: string;
  readonly message: string;
  readonly node?: string;
  readonly stack?: string;
}

export interface RunDetail {
  readonly run: RunSummary;
  readonly status: RunStatus;
  readonly state: Readonly<Record<string, unknown>>;
  readonly pending: readonly string[];
  readonly path: readonly string[];
  readonly error?: ErrorValue;
  /** Set while the run waits behind its graph's concurrency limit (GET /runs/:id). */
  readonly queued?: {
    readonly key: string;
    readonly concurrency: number;
    readonly since: string;
    readonly position: number;
  };
}

export interface Usage {
  readonly inputTokens?: number;
  readonly outputTokens?: number;
  readonly totalTokens?: number;
  readonly costUsd?: number;
  readonly model?: string;
}

export interface TraceEntry {
  readonly node: string;
  readonly activation: string;
  readonly parent: string | null;
  readonly attempt: number;
  readonly startedAt: Iso;
  readonly durationMs: number;
  readonly status: 'succeeded' | 'failed' | 'cancelled';
  readonly retried: boolean;
  readonly reused?: true;
  readonly usage?: Usage;
  readonly error?: {
    readonly code: string;
    readonly class: string;
    readonly message: string;
    readonly stack?: string;
  };
  /** The attempt's last `ctx.heartbeat()`. */
  readonly heartbeat?: Heartbeat;
}

/** When a node last said it is alive, and what it said. */
export interface Heartbeat {
  readonly at: Iso;
  readonly details?: unknown;
}

export interface Trace {
  readonly entries: readonly TraceEntry[];
  readonly path: readonly string[];
}

export interface NodeDef {
  readonly name: string;
  readonly kind: string;
  readonly visits?: number;
  readonly onError?: string;
  readonly reads?: readonly string[];
  readonly writes?: readonly string[];
  readonly terminal?: boolean;
  readonly retry?: { readonly attempts: number };
  readonly join?: { readonly policy: { readonly kind: string } };
}

export type FanOutDef =
  | {
      readonly kind: 'fixed';
      readonly from: string;
      readonly branches: readonly string[];
      readonly join: string;
    }
  | {
      readonly kind: 'map';
      readonly from: string;
      readonly over: string;
      readonly branch: string;
      readonly join: string;
    };

export interface GraphDef {
  readonly name: string;
  readonly version: number;
  readonly fields: readonly string[];
  readonly entry: string | null;
  readonly nodes: readonly NodeDef[];
  readonly edges: readonly { readonly from: string; readonly to: string }[];
  readonly routes: readonly { readonly from: string; readonly targets: readonly string[] }[];
  readonly fanOuts: readonly FanOutDef[];
  /** Graphs run as one node of this one (issue 17), by that node's name. */
  readonly subgraphs?: readonly { readonly name: string; readonly graph: GraphDef }[];
}

export interface GraphInfo {
  readonly name: string;
  readonly hash: string;
  readonly version: number;
}

/** An effect a run recorded (`GET /runs/:id/effects`): its key is `runId/activation/name`. */
export interface EffectEntry {
  readonly key: string;
  readonly result: unknown;
  readonly at: Iso;
}

/** One event of a run's stream (`GET /runs/:id/events`); fields beyond these depend on `type`. */
export interface StreamEvent {
  readonly offset: string;
  readonly runId: string;
  readonly seq: number;
  readonly at: Iso;
  readonly type: string;
  readonly activation?: string;
  readonly activations?: readonly string[];
  readonly node?: string;
  readonly attempt?: number;
  readonly parent?: string | null;
  readonly branch?: { readonly fanOut: string; readonly index: number };
  readonly notBefore?: Iso;
  /** With `notBefore`: the activation sleeps until then (a sleep, a node's notBefore). */
  readonly sleeping?: true;
  /** With `sleeping`: the resource whose rate limit deferred the attempt. */
  readonly rateLimited?: string;
  readonly update?: unknown;
  readonly reused?: true;
  readonly error?: ErrorValue;
  readonly retrying?: boolean;
  readonly status?: RunStatus;
  readonly requestId?: string;
  readonly prompt?: string;
  readonly name?: string;
  readonly data?: unknown;
  /** A live `heartbeat` event's details. */
  readonly details?: unknown;
}

export interface WaitRequest {
  readonly prompt: string;
  readonly schema: JsonSchema | null;
  readonly timeoutMs: number | null;
  /** An event node's wait: the signal it takes, and the key a `{ graph, key }` signal names. */
  readonly event?: { readonly name: string; readonly graph: string; readonly key?: string };
}

export interface Wait {
  readonly requestId: string;
  readonly node: string;
  readonly activation: string;
  readonly request: WaitRequest;
  readonly openedAt: Iso;
  readonly answer: unknown;
  readonly answeredBy: string | null;
  readonly answeredAt: Iso | null;
  readonly closedAt: Iso | null;
}

export interface HistoryStep {
  readonly seq: number;
  readonly at: Iso;
  readonly event: string;
  readonly activation?: string;
  readonly status: RunStatus;
  readonly state: Readonly<Record<string, unknown>>;
}

export interface QuarantineEntry {
  readonly node: string;
  readonly activation: string;
  readonly output: unknown;
  readonly reasons: readonly string[];
}

/** A JSON Schema, as zod writes one for a wait's answer: the parts the form reads. */
export interface JsonSchema {
  readonly type?: string | readonly string[];
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly items?: JsonSchema;
  readonly enum?: readonly unknown[];
  readonly const?: unknown;
  readonly anyOf?: readonly JsonSchema[];
  readonly description?: string;
  readonly title?: string;
  readonly default?: unknown;
  readonly minimum?: number;
  readonly maximum?: number;
}

/** A schedule as `GET /schedules` lists it. */
export interface Schedule {
  readonly id: string;
  readonly graph: string;
  readonly cron: string;
  readonly timezone: string;
  readonly input: unknown;
  readonly overlap: string;
  readonly catchUp: string;
  readonly paused: boolean;
  readonly nextAt: string | null;
  readonly bufferedAt: string | null;
  readonly lastTickAt: string | null;
  readonly lastRunId: string | null;
}
