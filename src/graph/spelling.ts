/**
 * The declared name an unknown one was most likely meant to be, for "did you mean" hints.
 *
 * The rule is TypeScript's own for its "Did you mean" errors: at most 40% of the typed name's
 * length may be edited (so a name of one or two characters only matches a different case), and
 * a different case alone is the closest match. Ties go to the name declared first, so the
 * suggestion is the same on every run.
 */
export class Spelling {
  readonly #names: readonly string[];
  readonly #lower: readonly string[];
  readonly #cache = new Map<string, string | undefined>();

  constructor(names: readonly string[]) {
    this.#names = names;
    this.#lower = names.map((name) => name.toLowerCase());
  }

  /**
   * The closest declared name, or undefined when none is close enough. Each distinct unknown
   * name costs one pass over the names, so only the first {@link maxLookups} distinct ones are
   * looked up: validation stays linear in the graph's size however many names are wrong.
   */
  suggest(unknown: string): string | undefined {
    // A declaration built as plain data may name a target with a number or null.
    if (typeof unknown !== 'string') return undefined;
    if (this.#cache.has(unknown)) return this.#cache.get(unknown);
    const found = this.#cache.size < maxLookups ? this.#closest(unknown) : undefined;
    this.#cache.set(unknown, found);
    return found;
  }

  #closest(unknown: string): string | undefined {
    const typed = unknown.toLowerCase();
    let limit = Math.floor(unknown.length * 0.4);
    let best: string | undefined;
    for (let i = 0; i < this.#names.length; i++) {
      const candidate = this.#lower[i]!;
      if (Math.abs(candidate.length - typed.length) > limit) continue;
      if (candidate === typed) return this.#names[i];
      const distance = boundedDistance(typed, candidate, limit);
      if (distance <= limit && distance > 0) {
        best = this.#names[i];
        // Only a strictly closer name replaces this one: the first declared wins a tie.
        limit = distance - 1;
      }
    }
    return best;
  }
}

/** Distinct unknown names looked up per validation. */
export const maxLookups = 64;

/**
 * Levenshtein distance between `a` and `b`, or `limit + 1` as soon as it must exceed `limit`:
 * only the band of width 2 * limit + 1 around the diagonal can stay within it.
 */
function boundedDistance(a: string, b: string, limit: number): number {
  const over = limit + 1;
  if (limit < 0) return over;
  let previous = new Array<number>(b.length + 1);
  let current = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) previous[j] = j <= limit ? j : over;
  for (let i = 1; i <= a.length; i++) {
    const from = Math.max(1, i - limit);
    const to = Math.min(b.length, i + limit);
    current[0] = i <= limit ? i : over;
    if (from > 1) current[from - 1] = over;
    let rowMin = current[0]!;
    for (let j = from; j <= to; j++) {
      const substitute = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      const value = Math.min(substitute, previous[j]! + 1, current[j - 1]! + 1, over);
      current[j] = value;
      if (value < rowMin) rowMin = value;
    }
    if (to < b.length) current[to + 1] = over;
    if (rowMin > limit) return over;
    [previous, current] = [current, previous];
  }
  return Math.min(previous[b.length] ?? over, over);
}
