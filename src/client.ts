// `waymark/client`: a small client of `waymark serve`'s API over fetch, with the run's event
// stream as an async iterator that reconnects after the last event it saw. The API writes
// points in time as ISO 8601 strings; the client gives them as the library does, as ms since
// the epoch, so a `StreamEvent` here is the one `watch()` yields.

import { type ClientSchedules, clientSchedules } from './client-schedules.js';
import type { ErrorCode } from './error/codes.js';
import { WaymarkError } from './error/waymark-error.js';
import type { Memory, MemoryItem } from './graph/memory.js';
import type { Plan } from './runtime/ops/plan.js';
import type { StreamEvent } from './runtime/watch/stream.js';

/** Options of {@link WaymarkClient}. */
export type { ClientSchedules, ScheduleRequest } from './client-schedules.js';
export type {
  Memory,
  MemoryItem,
  MemoryNamespaceOptions,
  MemoryPutOptions,
  MemoryScalar,
  MemorySearchOptions,
} from './graph/memory.js';
export type { Cost } from './runtime/ops/expected.js';
export type { Plan, PlanStep } from './runtime/ops/plan.js';
export type { Schedule } from './runtime/schedule/schedule.js';

export interface ClientOptions {
  /** The server's URL, as `waymark serve` prints it. */
  readonly url: string;
  readonly token: string;
  /** The fetch to use; default the global one. */
  readonly fetch?: typeof fetch;
  /** Pause before reconnecting a stream that broke. Default 200 ms. */
  readonly reconnectMs?: number;
}

/** Options of {@link WaymarkClient.events}. */
export interface EventsOptions {
  /** The offset of the last event already seen: the stream goes on right after it. */
  readonly after?: string;
  /**
   * `'stop'` (the default): the iteration ends where the run stops (it waits, or it has ended).
   * `'end'`: it follows the run across its waits to its end.
   */
  readonly until?: 'stop' | 'end';
  readonly signal?: AbortSignal;
}

/** A run as the API lists it (its times in ms since the epoch, as the library gives them). */
/** A run queued behind its graph's concurrency limit, as the API tells it (`since` in ms). */
export interface ApiQueued {
  readonly runId: string;
  readonly graph: string;
  readonly key: string;
  readonly concurrency: number;
  readonly since: number;
  /** Its place in its key's line: 1 starts next. */
  readonly position: number;
}

export interface ApiRun {
  readonly runId: string;
  readonly graph: string;
  readonly graphHash: string;
  readonly status: string;
  readonly seq: number;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly labels: Readonly<Record<string, string>>;
}

/** A wait of a run, as the API lists it (its times in ms since the epoch). */
export interface ApiWait {
  readonly requestId: string;
  readonly node: string;
  readonly activation: string;
  /** What is asked: its prompt and answer schema. */
  readonly request: unknown;
  readonly openedAt: number;
  readonly answer: unknown;
  readonly answeredBy: string | null;
  readonly answeredAt: number | null;
  readonly closedAt: number | null;
}

/** A signal as the API gives it: its payload parsed, its times in ms since the epoch. */
export interface ApiSignal {
  readonly id: string;
  readonly graph: string;
  readonly runId: string | null;
  readonly key: string | null;
  readonly name: string;
  readonly payload: unknown;
  readonly sentAt: number;
  readonly expiresAt: number;
  readonly consumedRun: string | null;
  readonly consumedAt: number | null;
}

/** What a signal did: delivered (the run's status after), kept for later, or a duplicate. */
export interface SignalOutcome {
  readonly outcome: 'delivered' | 'kept' | 'duplicate';
  readonly signal: ApiSignal;
  readonly status?: string;
}

/** How a request that moved a run on was answered: the run and where it stands now. */
export interface Moved {
  readonly runId: string;
  readonly status: string;
}

/**
 * A client of the HTTP API. Every refusal rejects with a `WaymarkError` of the code the server
 * answered with (`AUTH_REQUIRED`, `RUN_NOT_FOUND`, ...), its message and details.
 *
 * @example
 * const api = new WaymarkClient({ url, token });
 * const { runId } = await api.start('triage', { issue: 'login fails' });
 * for await (const event of api.events(runId)) console.log(event.offset, event.type);
 */
export class WaymarkClient {
  readonly #url: string;
  readonly #token: string;
  readonly #fetch: typeof fetch;
  readonly #reconnectMs: number;

  /**
   * The memory kept across runs in the server's store, as `memoryOf(store)` gives it: `put`,
   * `get`, `search`, `delete` (`PUT`, `GET`, `POST .../search`, `DELETE` under `/memory`).
   *
   * @example
   * await api.memory.put(['users', 'u1'], 'prefs', { theme: 'dark' });
   * const found = await api.memory.search(['users'], { filter: { theme: 'dark' } });
   */
  readonly memory: Memory;

  /**
   * The schedules of the server's graphs (`/schedules`): list, get, add, pause, resume, remove.
   *
   * @example
   * await api.schedules.add({ graph: 'report', cron: '0 9 * * 1-5', input: { team: 'sales' } });
   */
  readonly schedules: ClientSchedules;

  constructor(options: ClientOptions) {
    this.#url = options.url.replace(/\/+$/, '');
    this.#token = options.token;
    this.#fetch = options.fetch ?? fetch;
    this.#reconnectMs = options.reconnectMs ?? 200;
    this.memory = this.#memory();
    this.schedules = clientSchedules((method, path, body) => this.#json(method, path, body));
  }

  #memory(): Memory {
    // The parts joined by periods, which no part may hold: one that does (or no part at all)
    // would name another namespace, so it is refused here, as the server would refuse it.
    const at = (ns: readonly string[], key: string) => {
      if (ns.length === 0 || ns.some((part) => part.includes('.')))
        throw new WaymarkError(
          'MEMORY_INVALID',
          'a memory namespace must be a non-empty list of parts without a period (.)',
          { retryable: false, details: { namespace: [...ns] } },
        );
      return `/memory/${encodeURIComponent(ns.join('.'))}/${encodeURIComponent(key)}`;
    };
    return {
      put: async (namespace, key, value, options = {}) =>
        itemOf(await this.#json('PUT', at(namespace, key), { value, ...options })),
      get: async (namespace, key) => {
        const { item } = await this.#json<{ item: WireItem | null }>('GET', at(namespace, key));
        return item === null ? undefined : itemOf(item);
      },
      search: async (prefix, options = {}) => {
        const body = { prefix, ...options };
        const { items } = await this.#json<{ items: WireItem[] }>('POST', '/memory/search', body);
        return items.map((item) => itemOf(item));
      },
      listNamespaces: async (options = {}) =>
        (await this.#json<{ namespaces: string[][] }>('POST', '/memory/namespaces', options))
          .namespaces,
      delete: async (namespace, key) =>
        (await this.#json<{ deleted: boolean }>('DELETE', at(namespace, key))).deleted,
    };
  }

  start(
    graph: string,
    input: unknown,
    options: { readonly runId?: string; readonly context?: unknown } = {},
  ): Promise<Moved> {
    return this.#json('POST', '/runs', { graph, input, ...options });
  }

  async listRuns(
    filter: {
      readonly status?: string;
      readonly graph?: string;
      readonly thread?: string;
      readonly limit?: number;
      readonly cursor?: string;
    } = {},
  ): Promise<{ readonly runs: readonly ApiRun[]; readonly next: string | null }> {
    const query = new URLSearchParams(
      Object.entries(filter).flatMap(([k, v]): [string, string][] =>
        v === undefined ? [] : [[k, String(v)]],
      ),
    );
    const q = query.size > 0 ? `?${query}` : '';
    const page = await this.#json<{ runs: ApiRun[]; next: string | null }>('GET', `/runs${q}`);
    return { runs: page.runs.map(runOf), next: page.next };
  }

  async getRun(runId: string): Promise<{
    readonly run: ApiRun;
    readonly status: string;
    readonly state: Record<string, unknown>;
    readonly pending: readonly string[];
    readonly path: readonly string[];
    /** Set while the run is queued behind its graph's concurrency limit. */
    readonly queued?: ApiQueued;
  }> {
    const view = await this.#json<{
      run: ApiRun;
      status: string;
      state: Record<string, unknown>;
      pending: string[];
      path: string[];
      queued?: ApiQueued & { since: string };
    }>('GET', `/runs/${encodeURIComponent(runId)}`);
    const { queued, ...rest } = view;
    return {
      ...rest,
      run: runOf(view.run),
      ...(queued !== undefined && { queued: { ...queued, since: msOf(queued.since) } }),
    };
  }

  /**
   * The runs queued behind their graph's concurrency limit, oldest first (the order they start
   * in), with each one's place in its key's line.
   *
   * @example
   * const { queued } = await client.queued({ graph: 'support' });
   */
  async queued(
    filter: { readonly graph?: string; readonly key?: string } = {},
  ): Promise<{ readonly queued: readonly ApiQueued[] }> {
    const query = new URLSearchParams(
      Object.entries(filter).flatMap(([k, v]): [string, string][] =>
        v === undefined ? [] : [[k, v]],
      ),
    );
    const q = query.size > 0 ? `?${query}` : '';
    const { queued } = await this.#json<{ queued: (ApiQueued & { since: string })[] }>(
      'GET',
      `/queued${q}`,
    );
    return { queued: queued.map((r) => ({ ...r, since: msOf(r.since) })) };
  }

  async waits(
    runId: string,
    options: { readonly open?: boolean } = {},
  ): Promise<{ readonly waits: readonly ApiWait[] }> {
    const q = options.open === undefined ? '' : `?open=${options.open}`;
    const { waits } = await this.#json<{ waits: ApiWait[] }>(
      'GET',
      `/runs/${encodeURIComponent(runId)}/waits${q}`,
    );
    return {
      waits: waits.map((w) => ({
        ...w,
        openedAt: msOf(w.openedAt),
        answeredAt: w.answeredAt === null ? null : msOf(w.answeredAt),
        closedAt: w.closedAt === null ? null : msOf(w.closedAt),
      })),
    };
  }

  answer(runId: string, requestId: string, answer: unknown, by?: string): Promise<Moved> {
    const path = `/runs/${encodeURIComponent(runId)}/waits/${encodeURIComponent(requestId)}/answer`;
    return this.#json('POST', path, { answer, ...(by !== undefined && { by }) });
  }

  /**
   * Sends a signal to a run's event node, or with `{ graph, key }` to the run of that graph
   * whose event waits under the key; kept if no run waits for it yet. An `id` makes a
   * second send a no-op.
   *
   * @example
   * await client.signal({ graph: 'orders', key: 'o-7' }, 'payment', { paidCents: 1200 }, { id: 'evt_1' });
   */
  async signal(
    target: string | { readonly graph: string; readonly key: string },
    name: string,
    payload: unknown,
    options: { readonly id?: string } = {},
  ): Promise<SignalOutcome> {
    const path =
      typeof target === 'string'
        ? `/runs/${encodeURIComponent(target)}/signals/${encodeURIComponent(name)}`
        : `/graphs/${encodeURIComponent(target.graph)}/signals/${encodeURIComponent(name)}`;
    const body = {
      payload,
      ...(typeof target !== 'string' && { key: target.key }),
      ...(options.id !== undefined && { id: options.id }),
    };
    const sent = await this.#json<SignalOutcome>('POST', path, body);
    return { ...sent, signal: signalOf(sent.signal) };
  }

  /**
   * The signals kept for runs that have not reached their event (or, by `state`, taken or
   * expired ones), oldest first.
   *
   * @example
   * const { signals } = await client.signals();
   */
  async signals(
    options: { readonly state?: 'kept' | 'consumed' | 'expired' } = {},
  ): Promise<{ readonly signals: readonly ApiSignal[] }> {
    const q = options.state === undefined ? '' : `?state=${options.state}`;
    const { signals } = await this.#json<{ signals: ApiSignal[] }>('GET', `/signals${q}`);
    return { signals: signals.map(signalOf) };
  }

  /**
   * What `resume(runId)` would read back, run again and re-pay, before anything runs; with
   * `to`, what a rewind to that node (with its note) would. Nothing is recorded.
   *
   * @example
   * const plan = await client.plan(runId);
   * plan.rePays; // { inputTokens: 800, outputTokens: 200, costUsd: 0.0002 }
   */
  plan(
    runId: string,
    rewind: { readonly to?: string; readonly note?: string; readonly noteField?: string } = {},
  ): Promise<Plan> {
    const query = new URLSearchParams(
      Object.entries(rewind).filter((e): e is [string, string] => e[1] !== undefined),
    ).toString();
    const path = `/runs/${encodeURIComponent(runId)}/plan${query === '' ? '' : `?${query}`}`;
    return this.#json('GET', path);
  }

  /**
   * Moves a stopped run on from where it stopped; with `goto`, from that node instead (its
   * pending activations dropped). A node it cannot be at is refused `GOTO_INVALID` before
   * anything is recorded.
   *
   * @example
   * await client.resume(runId, { goto: 'draft' });
   */
  resume(runId: string, options: { readonly goto?: string } = {}): Promise<Moved> {
    return this.#json('POST', `/runs/${encodeURIComponent(runId)}/resume`, {
      ...(options.goto !== undefined && { goto: options.goto }),
    });
  }

  cancel(runId: string, reason?: string): Promise<Moved> {
    return this.#json(
      'POST',
      `/runs/${encodeURIComponent(runId)}/cancel`,
      reason === undefined ? {} : { reason },
    );
  }

  /**
   * Deletes a run and all it owns (`DELETE /runs/:id`); `force` deletes a waiting one too.
   * @throws WaymarkError `RUN_NOT_FOUND`, `RUN_LIVE`, `RUN_WAITING`, `RUN_REFERENCED`.
   *
   * @example
   * await client.deleteRun(runId);
   */
  async deleteRun(runId: string, options: { readonly force?: boolean } = {}): Promise<DeletedRuns> {
    return deletedOf(
      await this.#json('DELETE', `/runs/${encodeURIComponent(runId)}${forceQuery(options)}`),
    );
  }

  /**
   * Deletes a thread: its first run and every later run of it (`DELETE /threads/:id`), newest first.
   * @throws WaymarkError as {@link deleteRun} does.
   *
   * @example
   * await client.deleteThread(threadId);
   */
  async deleteThread(
    threadId: string,
    options: { readonly force?: boolean } = {},
  ): Promise<DeletedRuns> {
    return deletedOf(
      await this.#json('DELETE', `/threads/${encodeURIComponent(threadId)}${forceQuery(options)}`),
    );
  }

  continueThread(
    runId: string,
    input: unknown,
    options: { readonly runId?: string } = {},
  ): Promise<Moved> {
    return this.#json('POST', `/runs/${encodeURIComponent(runId)}/continue`, { input, ...options });
  }

  patch(
    runId: string,
    update: Record<string, unknown>,
    by: string,
    reason: string,
    options: { readonly asNode?: string } = {},
  ): Promise<Moved> {
    return this.#json('POST', `/runs/${encodeURIComponent(runId)}/patch`, {
      update,
      by,
      reason,
      ...(options.asNode !== undefined && { asNode: options.asNode }),
    });
  }

  /**
   * The run's events from its start (or after `after`), live to where the run stops: it waits
   * (for a person, a timer, a breakpoint) or it has ended. Answer the wait, then read on with
   * `after` set to the last offset seen; or follow across every wait with `until: 'end'`. A
   * connection that breaks is opened again after the last event seen (`Last-Event-ID`), so the
   * iteration sees every event once; a refusal (no such run, a bad offset) rejects, an aborted
   * `signal` ends it.
   */
  async *events(runId: string, options: EventsOptions = {}): AsyncGenerator<StreamEvent, void> {
    let last = options.after;
    const until = options.until === 'end' ? '?until=end' : '';
    for (;;) {
      try {
        const path = `/runs/${encodeURIComponent(runId)}/events${until}`;
        const res = await this.#fetch(`${this.#url}${path}`, {
          headers: {
            authorization: `Bearer ${this.#token}`,
            ...(last !== undefined && { 'last-event-id': last }),
          },
          ...(options.signal !== undefined && { signal: options.signal }),
        });
        if (!res.ok) throw await refusal(res);
        for await (const event of sseEvents(res)) {
          last = event.offset;
          yield event;
        }
        // The server closes a stream once the run has stopped (or ended) and all of it was sent.
        return;
      } catch (error) {
        if (options.signal?.aborted) return;
        if (error instanceof WaymarkError) throw error;
        // The connection broke: open it again after what was seen.
      }
      await new Promise((resolve) => setTimeout(resolve, this.#reconnectMs));
    }
  }

  async #json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.#fetch(`${this.#url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.#token}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    if (!res.ok) throw await refusal(res);
    return (await res.json()) as T;
  }
}

/** A refused response as the WaymarkError the server named. */
async function refusal(res: Response): Promise<WaymarkError> {
  let error: { code?: string; message?: string; details?: unknown } | undefined;
  try {
    error = ((await res.json()) as { error?: typeof error }).error;
  } catch {
    error = undefined;
  }
  const code = (error?.code ?? 'INTERNAL') as ErrorCode;
  // The server's message already starts with its code, as every WaymarkError's does; the error
  // made here puts it there again, so it is taken off first: the code shows once.
  const told = error?.message ?? `the server answered ${res.status}`;
  const message = told.startsWith(`${code}: `) ? told.slice(code.length + 2) : told;
  return new WaymarkError(code, message, {
    retryable: res.status >= 500,
    ...(error?.details !== undefined &&
      error.details !== null && { details: error.details as Record<string, unknown> }),
  });
}

/** The events of an SSE response body, parsed. */
async function* sseEvents(res: Response): AsyncGenerator<StreamEvent, void, undefined> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end = buffer.indexOf('\n\n');
      while (end !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).replace(/^ /, ''))
          .join('\n');
        if (data !== '') yield eventOf(JSON.parse(data) as Record<string, unknown>);
        end = buffer.indexOf('\n\n');
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** A point in time the API gave (ISO 8601; a number from a server before it wrote ISO). */
function signalOf(s: ApiSignal): ApiSignal {
  return {
    ...s,
    sentAt: msOf(s.sentAt),
    expiresAt: msOf(s.expiresAt),
    consumedAt: s.consumedAt === null ? null : msOf(s.consumedAt),
  };
}

function msOf(value: unknown): number {
  return typeof value === 'number' ? value : Date.parse(String(value));
}

type WireItem = Omit<MemoryItem, 'createdAt' | 'updatedAt' | 'expiresAt'> & {
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly expiresAt: string | null;
};

/** A memory item from the wire, its times in ms. */
function itemOf<V>(wire: WireItem): MemoryItem<V> {
  return {
    ...wire,
    value: wire.value as V,
    createdAt: msOf(wire.createdAt),
    updatedAt: msOf(wire.updatedAt),
    expiresAt: wire.expiresAt === null ? null : msOf(wire.expiresAt),
  };
}

function runOf(run: ApiRun): ApiRun {
  return { ...run, createdAt: msOf(run.createdAt), updatedAt: msOf(run.updatedAt) };
}

/** A stream event from the wire, its times in ms, as `watch()` yields it. */
function eventOf(wire: Record<string, unknown>): StreamEvent {
  const event: Record<string, unknown> = { ...wire, at: msOf(wire.at) };
  if (wire.notBefore !== undefined) event.notBefore = msOf(wire.notBefore);
  if (wire.emittedAt !== undefined) event.emittedAt = msOf(wire.emittedAt);
  return event as StreamEvent;
}

/** The runs a delete removed, times in ms since the epoch. */
export interface DeletedRuns {
  readonly runs: readonly {
    readonly runId: string;
    readonly graph: string;
    readonly status: string;
    readonly createdAt: number;
  }[];
}

function forceQuery(options: { readonly force?: boolean }): string {
  return options.force === true ? '?force=true' : '';
}

function deletedOf(wire: unknown): DeletedRuns {
  const { runs } = wire as {
    runs: { runId: string; graph: string; status: string; createdAt: string }[];
  };
  return { runs: runs.map((r) => ({ ...r, createdAt: msOf(r.createdAt) })) };
}
