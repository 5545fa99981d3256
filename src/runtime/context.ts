import { type ExecOptions, type ExecResult, execProcess } from '../effects/exec.js';
import { type EffectLedger, effectKey, performEffect } from '../effects/ledger.js';
import type { ErrorValue } from '../error/error-value.js';
import { WaymarkError } from '../error/waymark-error.js';
import type { JoinSummary, NodeContext } from '../graph/types.js';
import type { Activation } from './snapshot.js';

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
  #effects: Set<string> | undefined;

  constructor(
    activation: Activation,
    input: {
      readonly runId: string;
      readonly errors: readonly ErrorValue[];
      readonly item: unknown;
      readonly index: number | undefined;
      readonly ledger: EffectLedger;
    },
    signal: AbortSignal | (() => AbortSignal),
    exec?: readonly string[],
  ) {
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
    return performEffect(this.#ledger, effectKey(this.runId, this.activationId, name), fn);
  }

  exec(argv: readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
    // The signal is read only here: a node that never starts a process never creates one.
    return execProcess(argv, options, { node: this.node, allow: this.#exec, signal: this.signal });
  }
}
