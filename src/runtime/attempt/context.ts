import { type ExecOptions, type ExecResult, execProcess } from '../../effects/exec.js';
import { type EffectLedger, effectKey, performEffect } from '../../effects/ledger.js';
import type { ErrorValue } from '../../error/error-value.js';
import { WaymarkError } from '../../error/waymark-error.js';
import type { Memory } from '../../graph/memory.js';
import type {
  Budget,
  EmitOptions,
  JoinSummary,
  NodeContext,
  Spend,
  TurnRecord,
  Usage,
  Workspace,
} from '../../graph/types.js';
import { confineExec } from '../../workspace/confine.js';
import { type WorkspaceSession, workspaceHandle } from '../../workspace/session.js';
import type { Activation, AttemptReport, RunLimits } from '../core/snapshot.js';
import { recordedMemory } from '../memory/recorded.js';
import { callAdmission } from './call-admission.js';
import type { Beat } from './execute.js';

/** How often an attempt's heartbeats reach the drive's watchers, at most. */
export const liveBeatEveryMs = 1000;

/**
 * The `ctx` a node body gets. A class rather than an object literal so the effect method and
 * the lazy signal cost nothing per step unless a node uses them.
 */
export class AttemptContext implements NodeContext {
  readonly runId: string;
  readonly activationId: string;
  readonly node: string;
  readonly attempt: number;
  readonly errors: readonly ErrorValue[];
  readonly error: ErrorValue | undefined;
  readonly item: unknown;
  readonly index: number | undefined;
  readonly join: JoinSummary | undefined;
  readonly #signal: AbortSignal | (() => AbortSignal);
  readonly #ledger: EffectLedger;
  readonly #exec: readonly string[] | undefined;
  readonly #limits: RunLimits;
  #effects: Set<string> | undefined;
  readonly spend: Spend;
  #usage: Usage | undefined;
  #quarantine: { readonly output: unknown; readonly reasons: readonly string[] }[] | undefined;
  #turns: TurnRecord[] | undefined;
  #emitted: { readonly name: string; readonly data: unknown; readonly at: number }[] | undefined;
  readonly #clock: { now(): number };
  readonly #live: ((name: string, data: unknown, at: number) => void) | undefined;
  #workspace: Workspace | undefined;
  #memory: Memory | undefined;
  #beat: Beat | undefined;
  readonly #liveBeat: ((at: number, details: unknown) => void) | undefined;
  #beatToldAt = Number.NEGATIVE_INFINITY;

  constructor(
    activation: Activation,
    input: {
      readonly runId: string;
      readonly errors: readonly ErrorValue[];
      readonly item: unknown;
      readonly index: number | undefined;
      readonly ledger: EffectLedger;
      readonly spent: Spend;
      readonly limits: RunLimits;
      readonly clock: { now(): number };
      /** Where ephemeral emits go: the drive's watchers. Absent: nobody watches, they are dropped. */
      readonly live?: (name: string, data: unknown, at: number) => void;
      /** Where heartbeats are told live: the drive's watchers. Absent: nobody watches. */
      readonly liveBeat?: (at: number, details: unknown) => void;
      /** Shared with the attempt's idle timer, when its node has `idleTimeoutMs`. */
      readonly beat?: Beat;
      /** Admits the attempt's later calls, when its node is rate-limited (call-admission.ts). */
      readonly admitCall?: ((call: number, signal: AbortSignal) => Promise<void>) | undefined;
    },
    signal: AbortSignal | (() => AbortSignal),
    exec?: readonly string[],
  ) {
    this.#clock = input.clock;
    this.#live = input.live;
    this.#liveBeat = input.liveBeat;
    this.runId = input.runId;
    this.activationId = activation.id;
    this.node = activation.node;
    this.attempt = activation.attempt;
    this.errors = input.errors;
    this.error = activation.error;
    this.item = input.item;
    this.index = input.index;
    this.join = activation.join;
    this.#signal = signal;
    this.#ledger = input.ledger;
    this.#exec = exec;
    this.spend = input.spent;
    this.#limits = input.limits;
    this.#beat = input.beat;
    const admit = input.admitCall;
    if (admit !== undefined)
      Object.defineProperty(this, callAdmission, { value: (n: number) => admit(n, this.signal) });
  }

  /** The attempt's last heartbeat, if it sent one (or has an idle timer). */
  get beat(): Beat | undefined {
    return this.#beat;
  }

  heartbeat(details?: unknown): void {
    this.#beat ??= { at: 0, beaten: false };
    const beat = this.#beat;
    beat.at = this.#clock.now();
    beat.beaten = true;
    // A copy through JSON only when there are details: a bare heartbeat writes down the time.
    if (details !== undefined) beat.details = JSON.parse(JSON.stringify(details));
    // Watchers hear at most one a second: a stream heartbeating per token must not flood them.
    if (this.#liveBeat !== undefined && beat.at - this.#beatToldAt >= liveBeatEveryMs) {
      this.#beatToldAt = beat.at;
      this.#liveBeat(beat.at, beat.details);
    }
  }

  get budget(): Budget {
    const { maxTokens, maxCostUsd } = this.#limits;
    return {
      ...(maxTokens !== undefined && { maxTokens }),
      ...(maxCostUsd !== undefined && { maxCostUsd }),
    };
  }

  get model(): string | undefined {
    return this.#limits.model;
  }

  get context(): unknown {
    return this.#limits.context;
  }

  usage(usage: Usage): void {
    const valid = (n: unknown) => typeof n === 'number' && Number.isFinite(n) && n >= 0;
    if (
      !valid(usage?.inputTokens) ||
      !valid(usage.outputTokens) ||
      (usage.costUsd !== undefined && !valid(usage.costUsd))
    ) {
      throw new WaymarkError(
        'REPORT_INVALID',
        `node "${this.node}" reported usage ${JSON.stringify(usage)}; tokens and cost must be numbers >= 0`,
        { retryable: false },
      );
    }
    const before = this.#usage;
    const model = usage.model ?? before?.model;
    const cost =
      before?.costUsd === undefined && usage.costUsd === undefined
        ? undefined
        : (before?.costUsd ?? 0) + (usage.costUsd ?? 0);
    this.#usage = {
      inputTokens: (before?.inputTokens ?? 0) + usage.inputTokens,
      outputTokens: (before?.outputTokens ?? 0) + usage.outputTokens,
      ...(model !== undefined && { model }),
      ...(cost !== undefined && { costUsd: cost }),
    };
  }

  quarantine(output: unknown, reasons: readonly string[]): void {
    if (!Array.isArray(reasons) || reasons.some((r) => typeof r !== 'string')) {
      throw new WaymarkError(
        'REPORT_INVALID',
        `node "${this.node}" quarantined an output without a list of reasons`,
        { retryable: false },
      );
    }
    // A copy through JSON: what is recorded is what a resume will read back.
    this.#quarantine ??= [];
    this.#quarantine.push({
      output: JSON.parse(JSON.stringify(output ?? null)),
      reasons: [...reasons],
    });
  }

  emit(name: string, data?: unknown, options?: EmitOptions): void {
    if (typeof name !== 'string' || name.length === 0) {
      throw new WaymarkError(
        'REPORT_INVALID',
        `node "${this.node}" emitted an event without a name`,
        {
          retryable: false,
        },
      );
    }
    // A copy through JSON, as a quarantined output is: what a watcher reads back from the store
    // is what the one in process saw.
    if (options?.ephemeral === true) {
      if (this.#live === undefined) return;
      this.#live(
        name,
        data === undefined ? null : JSON.parse(JSON.stringify(data)),
        this.#clock.now(),
      );
      return;
    }
    const copy = data === undefined ? null : JSON.parse(JSON.stringify(data));
    this.#emitted ??= [];
    this.#emitted.push({ name, data: copy, at: this.#clock.now() });
  }

  turn(turn: TurnRecord): void {
    this.#turns ??= [];
    this.#turns.push(turn);
  }

  /** What the attempt reported besides its update; undefined when nothing. */
  report(): AttemptReport | undefined {
    if (this.#usage === undefined && this.#quarantine === undefined && this.#emitted === undefined)
      return undefined;
    return {
      ...(this.#usage !== undefined && { usage: this.#usage }),
      ...(this.#quarantine !== undefined && { quarantine: this.#quarantine }),
      ...(this.#emitted !== undefined && { emitted: this.#emitted }),
    };
  }

  /** The turns reported, for the trace; undefined when none. */
  turns(): readonly TurnRecord[] | undefined {
    return this.#turns;
  }

  get memory(): Memory {
    this.#memory ??= recordedMemory(this.#ledger, {
      runId: this.runId,
      activationId: this.activationId,
      signal: () => this.signal,
    });
    return this.#memory;
  }

  get signal(): AbortSignal {
    return typeof this.#signal === 'function' ? this.#signal() : this.#signal;
  }

  effect<T>(name: string, fn: (key: string) => T | Promise<T>): Promise<T> {
    if (typeof name !== 'string' || name.length === 0) {
      return Promise.reject(
        new WaymarkError(
          'EFFECT_NAME_INVALID',
          `node "${this.node}" called ctx.effect without a name`,
          { retryable: false },
        ),
      );
    }
    // Two effects under one name in one attempt would share a key, and the second would get the
    // first one's recorded result: two intents, one key. Refused instead.
    this.#effects ??= new Set();
    if (this.#effects.has(name)) {
      return Promise.reject(
        new WaymarkError(
          'EFFECT_NAME_REUSED',
          `node "${this.node}" called ctx.effect("${name}") twice in one attempt; give each effect its own name`,
          { retryable: false },
        ),
      );
    }
    this.#effects.add(name);
    const key = effectKey(this.runId, this.activationId, name);
    return performEffect(this.#ledger, key, fn, this.signal);
  }

  exec(argv: readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
    let run = options;
    const root = this.#workspace?.path;
    if (root !== undefined) {
      // A workspace node's processes run in its working copy and name nothing outside it.
      try {
        run = { ...options, cwd: confineExec(root, argv, options?.cwd, this.node) };
      } catch (error) {
        return Promise.reject(error);
      }
    }
    // The signal is read only here: a node that never starts a process never creates one.
    return execProcess(argv, run, { node: this.node, allow: this.#exec, signal: this.signal });
  }

  get workspace(): Workspace | undefined {
    return this.#workspace;
  }

  /** Gives the attempt its working copy: `ctx.workspace`, and where `ctx.exec` runs. */
  attachWorkspace(session: Pick<WorkspaceSession, 'path' | 'base' | 'start'>): void {
    this.#workspace = workspaceHandle(
      session,
      (argv, options) => this.exec(argv, options),
      this.node,
    );
  }
}
