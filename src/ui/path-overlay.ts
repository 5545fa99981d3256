import type { ActivationView, RunModel } from './run-model.js';

/** What the recorded path adds to the declared graph: per node and per edge taken. */
export interface PathOverlay {
  /** Activations per node. */
  readonly counts: Map<string, number>;
  /** Activations per node that failed for good, and attempts that were retried. */
  readonly failed: Map<string, number>;
  readonly retried: Map<string, number>;
  /** Edges taken (`from->to`, from the activation that scheduled each one), with how often. */
  readonly edges: Map<string, number>;
  /** Fan-out copies per node: the branch or item index of each. */
  readonly copies: Map<string, number[]>;
  /** Nodes the run stands at now: waiting, scheduled, paused, or the one that failed it. */
  readonly stoppedAt: Set<string>;
}

export const edgeKey = (from: string, to: string) => `${from}->${to}`;

const bump = (m: Map<string, number>, k: string, by = 1) => m.set(k, (m.get(k) ?? 0) + by);

/**
 * The overlay of a run: counted from its activations, each edge from the node of the activation
 * that scheduled it to its own. Linear in the activations.
 *
 * @example
 * overlayOf(model).counts.get('reproduce'); // 2
 */
export function overlayOf(model: RunModel, runStatus?: string): PathOverlay {
  const o: PathOverlay = {
    counts: new Map(),
    failed: new Map(),
    retried: new Map(),
    edges: new Map(),
    copies: new Map(),
    stoppedAt: new Set(),
  };
  const ends = branchEnds(model);
  for (const a of model.activations) {
    bump(o.counts, a.node);
    if (a.status === 'failed') bump(o.failed, a.node);
    const retries = a.attempts.filter((x) => x.status === 'failed').length;
    if (retries > 0 && a.attempts.length > 1) bump(o.retried, a.node, a.attempts.length - 1);
    const parent = a.parent === null ? undefined : model.byId.get(a.parent);
    // A join's activation is scheduled by the fan-out (the activation that started it), not by a
    // branch; every branch that ended well came back to it along its own edge.
    const fanOut = a.parent === null ? undefined : ends.get(a.parent);
    if (fanOut !== undefined && a.branch?.fanOut !== a.parent)
      for (const end of fanOut) bump(o.edges, edgeKey(end, a.node));
    else if (parent !== undefined) bump(o.edges, edgeKey(parent.node, a.node));
    if (a.branch !== undefined) {
      const list = o.copies.get(a.node) ?? [];
      list.push(a.branch.index);
      o.copies.set(a.node, list);
    }
    if (stands(a, runStatus)) o.stoppedAt.add(a.node);
  }
  return o;
}

/**
 * Per fan-out (by the id of the activation that started it), the nodes its branches ended at:
 * branch activations that scheduled no more of their branch.
 */
function branchEnds(model: RunModel): Map<string, Set<string>> {
  const continued = new Set<string>();
  for (const a of model.activations) {
    const parent = a.parent === null ? undefined : model.byId.get(a.parent);
    if (parent?.branch !== undefined && a.branch?.fanOut === parent.branch.fanOut)
      continued.add(parent.id);
  }
  const ends = new Map<string, Set<string>>();
  for (const a of model.activations) {
    if (a.branch === undefined || continued.has(a.id) || a.status !== 'succeeded') continue;
    const set = ends.get(a.branch.fanOut) ?? new Set();
    set.add(a.node);
    ends.set(a.branch.fanOut, set);
  }
  return ends;
}

function stands(a: ActivationView, runStatus: string | undefined): boolean {
  if (a.status === 'waiting' || a.status === 'paused') return true;
  if (a.status === 'scheduled') return runStatus !== 'cancelled' && runStatus !== 'succeeded';
  return a.status === 'failed' && runStatus === 'failed';
}
