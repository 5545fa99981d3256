import type { NodeContext } from '../graph/types.js';

/** Machine-readable reasons a check rejects something for (`'line-out-of-range'`); empty: passed. */
export type Reasons = readonly string[];

/** The fields of an output whose value is a list. */
export type ListKeys<O> = {
  [K in keyof O]-?: NonNullable<O[K]> extends readonly unknown[] ? K : never;
}[keyof O] &
  string;

type ItemOf<L> = NonNullable<L> extends readonly (infer T)[] ? T : never;

/**
 * A deterministic check per item of an output's list fields: the items it gives reasons for go
 * to quarantine and are left out of the update; the others pass.
 *
 * @example
 * checkItems: { findings: (f, s) => (f.line > lineCount(s, f.file) ? ['line-out-of-range'] : []) }
 */
export type ItemChecks<O, S> = {
  readonly [K in ListKeys<O>]?: (
    item: ItemOf<O[K]>,
    state: Readonly<S>,
    index: number,
    ctx: NodeContext,
  ) => Reasons | Promise<Reasons>;
};

/** A deterministic check of the whole output; any reason sends it all to quarantine. */
export type OutputCheck<O, S> = (
  output: O,
  state: Readonly<S>,
  ctx: NodeContext,
) => Reasons | Promise<Reasons>;

/** What the checks set aside, in order: each item (or the whole output) with its reasons. */
export type Quarantined = readonly { readonly output: unknown; readonly reasons: Reasons }[];

/**
 * Runs the item checks, then the whole-output check on what passed. Returns the output with the
 * failing items left out, or undefined when the whole output was quarantined.
 */
export async function applyChecks<O, S>(
  output: O,
  state: Readonly<S>,
  ctx: NodeContext,
  check: OutputCheck<O, S> | undefined,
  checkItems: ItemChecks<O, S> | undefined,
): Promise<{ readonly kept: O | undefined; readonly quarantined: Quarantined }> {
  const quarantined: { output: unknown; reasons: Reasons }[] = [];
  const setAside = (value: unknown, reasons: Reasons) => {
    ctx.quarantine(value, reasons);
    quarantined.push({ output: value, reasons });
  };
  let kept = output;
  for (const [field, fn] of Object.entries(checkItems ?? {})) {
    const list = (kept as Record<string, unknown>)[field];
    if (!Array.isArray(list) || typeof fn !== 'function') continue;
    const passed: unknown[] = [];
    for (const [index, item] of list.entries()) {
      const reasons = await fn(item, state, index, ctx);
      if (reasons.length > 0) setAside(item, reasons);
      else passed.push(item);
    }
    kept = { ...kept, [field]: passed };
  }
  if (check) {
    const reasons = await check(kept, state, ctx);
    if (reasons.length > 0) {
      setAside(kept, reasons);
      return { kept: undefined, quarantined };
    }
  }
  return { kept, quarantined };
}
