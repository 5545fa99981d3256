import type { Report } from './diagnostic.js';
import type { Adjacency } from './internal/adjacency.js';
import { kindTraits } from './kinds.js';
import type { GraphDef, NodeDef } from './types.js';

/**
 * Checks a graph's `untracked` fields (docs/diagnostics.md): each must be a state field, listed
 * once, without a reducer, and none may be what the run records by nature: the items of a map
 * (kept in the checkpoint), a person's answer (recorded as given), or what a subgraph is handed
 * (its state is tracked). A node that reads one that a node before a stop point writes gets
 * `UNTRACKED_ACROSS_WAIT`: after the run resumes there, it reads the default.
 */
export function checkUntracked(
  def: GraphDef,
  nodes: readonly NodeDef[],
  exits: Adjacency,
  report: Report,
): void {
  const list = def.untracked;
  if (list === undefined) return;
  if (!Array.isArray(list)) {
    report('UNTRACKED_INVALID', `the graph has untracked = ${JSON.stringify(list)}`, {
      hint: "list top-level state fields, such as untracked: ['connection']",
    });
    return;
  }
  const fields = new Set(def.fields);
  const seen = new Set<string>();
  const bad = (field: string, why: string, hint?: string) =>
    report('UNTRACKED_INVALID', `untracked field "${field}" ${why}`, hint ? { hint } : {});
  for (const field of list) {
    if (seen.has(field)) bad(field, 'is listed more than once', 'list each field once');
    else if (!fields.has(field))
      bad(field, 'is not a field of the state schema', 'name a top-level field of the state');
    else if (Object.hasOwn(def.reducers, field))
      bad(
        field,
        `has the reducer "${def.reducers[field]}": an untracked field holds the last value written`,
        'drop the reducer, or keep the field tracked',
      );
    seen.add(field);
  }
  for (const fanOut of def.fanOuts)
    if (fanOut.kind === 'map' && seen.has(fanOut.over))
      bad(
        fanOut.over,
        `is what the map at "${fanOut.from}" runs over, and a map's items are kept in its checkpoint`,
      );
  for (const node of nodes) {
    if (!kindTraits[node.kind]?.opensWait) continue;
    const named = [...(node.writes ?? []), ...(node.answers ?? [])].filter((f) => seen.has(f));
    for (const field of new Set(named))
      report(
        'UNTRACKED_INVALID',
        `untracked field "${field}" is written by person node "${node.name}", whose answer is recorded`,
        { node: node.name, hint: 'write the answer to a tracked field' },
      );
  }
  for (const sub of def.subgraphs ?? []) {
    if (sub.graph.untracked !== undefined && sub.graph.untracked.length > 0)
      report(
        'UNTRACKED_INVALID',
        `subgraph "${sub.name}" declares untracked fields, which a graph run as a node does not support yet`,
        { node: sub.name, hint: 'declare the fields untracked on the enclosing graph instead' },
      );
    if (sub.input === 'function') continue;
    for (const [childField, parentField] of Object.entries(sub.input))
      if (seen.has(parentField))
        bad(
          parentField,
          `is handed to subgraph "${sub.name}" as "${childField}", whose state is recorded`,
        );
  }
  acrossWaits(def, nodes, exits, seen, report);
}

/**
 * `UNTRACKED_ACROSS_WAIT` for each node that declares `reads` of an untracked field a node
 * writes on a path through a stop point to it (a person node, or a subgraph holding one):
 * the run may resume between the write and the read, and a resumed run starts the field from
 * its default. One walk per writer of such a field, over (node, stop passed) pairs: linear in
 * nodes + edges for each.
 */
function acrossWaits(
  def: GraphDef,
  nodes: readonly NodeDef[],
  exits: Adjacency,
  untracked: ReadonlySet<string>,
  report: Report,
): void {
  const stops = nodes.map((node) => stopsTheRun(def, node));
  if (!stops.includes(true)) return;
  const { start, next } = exits;
  const n = nodes.length;
  for (const field of untracked) {
    const reads = (i: number) => Array.isArray(nodes[i]!.reads) && nodes[i]!.reads!.includes(field);
    const writes = (i: number) =>
      Array.isArray(nodes[i]!.writes) && nodes[i]!.writes!.includes(field);
    const warned = new Uint8Array(n);
    nodes.forEach((writer, w) => {
      if (!writes(w)) return;
      // seen[2v + c]: node v reached with (c = 1) or without (c = 0) a stop point passed.
      const seen = new Uint8Array(2 * n);
      const queue: number[] = [];
      const visit = (v: number, c: number) => {
        if (seen[2 * v + c]) return;
        seen[2 * v + c] = 1;
        queue.push(2 * v + c);
      };
      for (let k = start[w]!; k < start[w + 1]!; k++) visit(next[k]!, 0);
      for (let head = 0; head < queue.length; head++) {
        const v = queue[head]! >> 1;
        const c = queue[head]! & 1;
        if (c === 1 && !warned[v] && reads(v)) {
          warned[v] = 1;
          report(
            'UNTRACKED_ACROSS_WAIT',
            `node "${nodes[v]!.name}" reads untracked field "${field}", which "${writer.name}" writes before a stop point on the way to it: a run resumed there reads the default`,
            { node: nodes[v]!.name },
          );
        }
        // A node that writes the field again sets it for what follows: the walk stops there.
        if (writes(v)) continue;
        const passed = c === 1 || stops[v] === true ? 1 : 0;
        for (let k = start[v]!; k < start[v + 1]!; k++) visit(next[k]!, passed);
      }
    });
  }
}

/** Whether a run can stop at this node and resume after it: a person, or a subgraph with one. */
function stopsTheRun(def: GraphDef, node: NodeDef): boolean {
  if (kindTraits[node.kind]?.opensWait === true) return true;
  if (node.kind !== 'subgraph') return false;
  const child = def.subgraphs?.find((s) => s.name === node.name)?.graph;
  return child?.nodes.some((inner) => stopsTheRun(child, inner)) === true;
}
