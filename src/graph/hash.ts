import { createHash } from 'node:crypto';
import type { GraphDef } from './types.js';

const byName = (a: { name: string }, b: { name: string }) =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
const key = (e: { from: string; to?: string }) => `${e.from}\u0000${e.to ?? ''}`;

/**
 * The structural hash of a graph: sha256 over a canonical form in which declaration order does
 * not matter (reordering `.node()` calls is not a change; adding an edge is).
 *
 * @example
 * structuralHash(compiled.def) === compiled.hash;
 */
export function structuralHash(def: GraphDef): string {
  return createHash('sha256')
    .update(JSON.stringify(canonical(def)))
    .digest('hex');
}

function canonical(def: GraphDef): object {
  return {
    name: def.name,
    version: def.version,
    fields: def.fields,
    reducers: Object.fromEntries(Object.entries(def.reducers).sort()),
    entry: def.entry,
    // A node's spend limits are budgets, not shape: changing one keeps stored runs resumable; so
    // is a rate limit, a quota. A person's answer fields are checked, not run: they stay out
    // too, so the hash of every graph with a person node is what it was before they were recorded.
    nodes: [...def.nodes]
      .sort(byName)
      .map(({ spend: _spend, answers: _answers, rateLimit: _rate, ...node }) => node),
    edges: [...def.edges].sort((a, b) => (key(a) < key(b) ? -1 : 1)),
    routes: [...def.routes]
      .map((r) => ({ from: r.from, targets: [...r.targets].sort() }))
      .sort((a, b) => (a.from < b.from ? -1 : 1)),
    // Branch order is meaningful (it is the merge order), so only the fan-outs are sorted.
    fanOuts: [...def.fanOuts].sort((a, b) => (key(a) < key(b) ? -1 : 1)),
    // Added only when declared, so the hash of every graph without them is what it was.
    ...(def.inputs !== undefined && { inputs: def.inputs }),
    ...(def.outputs !== undefined && { outputs: def.outputs }),
    // What is stored changes with it: a run stopped under the other list does not resume.
    ...(def.untracked !== undefined && { untracked: [...def.untracked].sort() }),
    ...(def.subgraphs !== undefined && {
      subgraphs: [...def.subgraphs].sort(byName).map((s) => ({ ...s, graph: canonical(s.graph) })),
    }),
  };
}
