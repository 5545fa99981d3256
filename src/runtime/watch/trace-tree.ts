import type { TraceEntry } from './trace.js';

/**
 * One line of a nested trace: an attempt, or a subgraph's run, which holds the attempts of its
 * nodes (and of the subgraphs inside it).
 */
export type TraceNode =
  | { readonly kind: 'attempt'; readonly entry: TraceEntry }
  | {
      readonly kind: 'subgraph';
      /** The id of the step that entered the subgraph (`review:1`, `list:1[3]/review:1`). */
      readonly activation: string;
      /** The subgraph's node (`review`, `mid/inner`). */
      readonly node: string;
      readonly children: readonly TraceNode[];
    };

/**
 * The trace as a tree: the entries of a subgraph's nodes (`review/plan`) nest under the step
 * that entered the child (`review:1`), each item of a map under its own; everything else stays
 * at the top, in recorded order. Read from the entries' `within` alone, so `waymark trace` nests
 * a stored run's trace without its graph. Linear in entries times nesting depth.
 *
 * @example
 * const [prep, review] = nestTrace(result.trace.entries); // review.kind === 'subgraph'
 */
export function nestTrace(entries: readonly TraceEntry[]): TraceNode[] {
  const top: TraceNode[] = [];
  const groups = new Map<string, TraceNode[]>();
  for (const entry of entries) {
    let siblings = top;
    for (const id of entry.within ?? []) {
      let children = groups.get(id);
      if (children === undefined) {
        children = [];
        groups.set(id, children);
        siblings.push({ kind: 'subgraph', activation: id, node: nodeOf(id), children });
      }
      siblings = children;
    }
    siblings.push({ kind: 'attempt', entry });
  }
  return top;
}

/** `review` from `review:1`, `mid/inner` from `list:1[3]/mid/inner:2`. */
function nodeOf(activation: string): string {
  const branch = activation.lastIndexOf(']/');
  const local = branch === -1 ? activation : activation.slice(branch + 2);
  const visit = local.lastIndexOf(':');
  return visit === -1 ? local : local.slice(0, visit);
}
