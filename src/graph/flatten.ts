import type { z } from 'zod';
import type { RuntimeNode, Scope } from './compiled.js';
import { END } from './end.js';
import type { Reducer } from './reducers.js';
import {
  entryOf,
  exitOf,
  leaveOf,
  mappedInline,
  type SubgraphEntry,
  slotReducer,
  slotSchema,
} from './subgraph.js';
import type { FanOutDef } from './types.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * Turns each subgraph node into nodes of this graph, so the runtime only ever sees one flat run:
 * the node keeps its name and becomes the entry, which sets the child's state in its slot; the
 * child's nodes follow under the path `name/…`, each scoped to the slot; `name/__end__` hands
 * the child's output back and takes over the node's edge, router or fan-out. Entry and exit are
 * inline: the step applies their mappings in the transition that reaches them. Checkpoints,
 * waits, retries, rewind and reuse then work inside a child exactly as in a flat graph, and a
 * child's node costs what a flat node costs.
 */
export function flatten(
  nodes: Map<string, RuntimeNode>,
  entries: readonly SubgraphEntry[],
  fieldSchemas: Map<string, z.ZodType>,
  reducers: Map<string, Reducer>,
): void {
  for (const entry of entries) {
    const { def, child } = entry;
    const outer = nodes.get(def.name)!;
    const slot = def.slot;
    const exit = exitOf(def.name);
    fieldSchemas.set(slot, slotSchema);
    reducers.set(slot, slotReducer(child));
    const { reads: _reads, join: _join, visits: _visits, ...exitDef } = outer.def;
    nodes.set(exit, {
      ...outer,
      def: { ...exitDef, name: exit },
      fn: mappedInline,
      inline: leaveOf(entry),
      cap: Number.POSITIVE_INFINITY,
      reads: undefined,
      writes: outer.writes && new Set([...outer.writes, slot]),
      join: undefined,
      wait: undefined,
    });
    const prefix = `${def.name}/`;
    const path = (name: string) => (name === END ? exit : prefix + name);
    nodes.set(def.name, {
      ...outer,
      fn: mappedInline,
      inline: entryOf(entry),
      next: path(child.entry),
      router: undefined,
      routerReads: undefined,
      fanOut: undefined,
      writes: new Set([slot]),
    });
    const where = [...(outer.scope?.path ?? []), slot];
    for (const inner of child.nodes.values()) {
      const name = path(inner.def.name);
      const scope: Scope = {
        path: [...where, ...(inner.scope?.path ?? [])],
        graph: inner.scope?.graph ?? child.name,
        fieldSchemas: inner.scope?.fieldSchemas ?? child.fieldSchemas,
      };
      const node: Mutable<RuntimeNode> = {
        ...inner,
        def: {
          ...inner.def,
          name,
          ...(inner.def.onError !== undefined && { onError: path(inner.def.onError) }),
        },
        next: inner.next === undefined ? undefined : path(inner.next),
        router: inner.router && renamedRouter(inner.router, path),
        fanOut: inner.fanOut && renamedFanOut(inner.fanOut, path),
        repeats: inner.repeats || outer.repeats,
        scope,
      };
      nodes.set(name, node);
    }
  }
}

// The child's router returns its own names; the flat graph knows them under the path.
function renamedRouter(
  router: NonNullable<RuntimeNode['router']>,
  path: (name: string) => string,
): NonNullable<RuntimeNode['router']> {
  const { fn, targets } = router;
  // Named once: a route is taken on every step through the node.
  const renamed = new Map([...targets].map((t) => [t, path(t)]));
  return {
    fn: (state) => {
      const target = fn(state);
      return (typeof target === 'string' && renamed.get(target)) || target;
    },
    targets: new Set(renamed.values()),
  };
}

function renamedFanOut(fanOut: FanOutDef, path: (name: string) => string): FanOutDef {
  return fanOut.kind === 'fixed'
    ? {
        ...fanOut,
        from: path(fanOut.from),
        branches: fanOut.branches.map(path),
        join: path(fanOut.join),
      }
    : { ...fanOut, from: path(fanOut.from), branch: path(fanOut.branch), join: path(fanOut.join) };
}
