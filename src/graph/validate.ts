import { checkLimits } from './concurrency.js';
import { type Diagnostic, type DiagnosticCode, type Report, warningCodes } from './diagnostic.js';
import { END, reservedNames } from './end.js';
import { type Adjacency, EdgeCollector, type Incoming, reverse } from './internal/adjacency.js';
import { blame, type Misnamed } from './internal/blame.js';
import { cyclicComponents } from './internal/cycles.js';
import { Spelling } from './spelling.js';
import type { GraphDef, NodeDef } from './types.js';
import { checkNodeOptions, isPositiveInt, show } from './validate-options.js';
import { checkParallel, resolveFanOuts } from './validate-parallel.js';
import { checkSubgraphs, parentGotos } from './validate-subgraphs.js';
import { checkUntracked } from './validate-untracked.js';

const hints: Readonly<Record<DiagnosticCode, string>> = {
  ENTRY_MISSING: 'call .entry(name) with the node the run starts at',
  ENTRY_UNKNOWN: 'point .entry() at a declared node, or declare the node',
  NAME_INVALID: 'give the node a non-empty string name',
  NAME_DUPLICATE: 'rename one of the nodes; names identify activations, effects and checkpoints',
  NAME_RESERVED:
    'pick another name; END, __end__, START and __start__ are reserved, and a state field may not start with @',
  EDGE_SOURCE_UNKNOWN: 'declare the node, or fix the name in .edge()',
  EDGE_TARGET_UNKNOWN: 'declare the node, fix the name in .edge(), or use END',
  EDGE_MULTIPLE: 'keep one static edge, or replace them with a router that picks one',
  EDGE_AND_ROUTE: 'remove the static edge and add its target to the router targets',
  ROUTE_SOURCE_UNKNOWN: 'declare the node, or fix the name in .route()',
  ROUTE_TARGET_UNKNOWN: 'declare the node, fix the name in the targets list, or use END',
  ROUTE_NO_TARGETS: 'list every node the router may return as its targets',
  ROUTE_DUPLICATE: 'merge the routers into one function with all targets declared',
  ON_ERROR_UNKNOWN: 'point onError at a declared node',
  DEAD_END: 'add an edge or a router from it, an edge to END, or mark it { terminal: true }',
  UNREACHABLE: 'add an edge or router target leading to it, or remove the node',
  TRAP: 'give a node of the loop an exit that leads to END',
  CYCLE_UNCAPPED: 'set { visits: n } on a node of the cycle so the loop cannot run forever',
  FIELD_UNKNOWN: 'name a field of the state schema, or add the field to the schema',
  FANOUT_NODE_UNKNOWN: 'declare the node, or fix the name in .fanOut() / .map()',
  FANOUT_EMPTY: 'list at least one branch entry node',
  FANOUT_CONFLICT: "a fan-out is the node's only way on: remove its edge, router or second fan-out",
  FANOUT_JOIN_UNREACHABLE: 'add an edge from the end of the branch to its join',
  BRANCH_ESCAPES:
    'end every path of the branch with an edge to its join, not END or the fan-out node',
  BRANCH_ENTERED:
    'point it at the fan-out node instead: a branch runs only when its fan-out starts it',
  ON_ERROR_TO_JOIN:
    "remove the onError: a branch node that fails without one fails its branch, and the join's tolerate decides whether the join still goes on",
  JOIN_WITHOUT_FANOUT:
    'name the node as the join of a .fanOut() or .map(), or drop its join option',
  JOIN_SHARED: 'give each fan-out its own join node',
  QUORUM_TOO_LARGE: 'lower k to at most the number of branches, or add branches',
  WRITE_CONFLICT:
    'declare a reducer for the field (append, union, sum, ...), or write it from one branch',
  READS_UNDECLARED:
    'declare { reads: [...] } with the fields the node reads; it then sees only those',
  WRITES_UNDECLARED:
    'declare { writes: [...] } with the fields the node updates; any other is refused',
  ANSWER_UNMAPPED:
    "give the person an update: (answer) => ({ ... }) that sets state fields, or name the answer's fields after state fields",
  UNTRACKED_INVALID:
    'list top-level state fields with a default, each once, none with a reducer, a map over it, a person writing it or a subgraph handed it',
  UNTRACKED_ACROSS_WAIT:
    'make the field tracked, or have a node after the stop point set it again before it is read',
  OPTION_INVALID:
    'use whole numbers >= 1 for visits, version and retry.attempts; 0 < timeoutMs <= 2147483647; retry.factor >= 1; a known kind and known error classes',
};

/**
 * Checks a graph declaration without running anything and returns every problem found, in a
 * stable order: errors, which stop `.compile()`, and warnings (`severity: 'warning'`), which do
 * not. Cost is linear in nodes + edges.
 *
 * @example
 * const problems = validate(builder.toDef()); // [] when the graph is sound
 */
export function validate(def: GraphDef): Diagnostic[] {
  return analyze(def, false).diagnostics;
}

/** The validator's findings, and what compile() needs from its walk. */
export interface Analysis {
  readonly diagnostics: Diagnostic[];
  /**
   * Nodes that can have more than one activation in a run: on a cycle (onError links and
   * fan-outs included) or inside a fan-out's branches. Every other node runs at most once, so
   * the runtime need not count its visits. Computed only when asked for.
   */
  readonly repeatable: ReadonlySet<string>;
}

/** {@link validate}, optionally also finding the nodes that can run more than once. */
export function analyze(def: GraphDef, findRepeatable: boolean): Analysis {
  const out: Diagnostic[] = [];
  const report: Report = (code, message, where = {}) => {
    const severity = warningCodes.has(code) ? 'warning' : 'error';
    const { hint = hints[code], ...rest } = where;
    out.push({ code, severity, message, hint, ...rest });
  };

  // Names: index the first declaration of each; later duplicates are reported and ignored.
  const indexOf = new Map<string, number>();
  const nodes: NodeDef[] = [];
  for (const node of def.nodes) {
    if (typeof node.name !== 'string' || node.name.length === 0) {
      report('NAME_INVALID', `a node has the invalid name ${JSON.stringify(node.name)}`);
      continue;
    }
    if (reservedNames.has(node.name)) {
      report('NAME_RESERVED', `node "${node.name}" uses a reserved name`, { node: node.name });
      // Only END itself stays out of the index, since an edge to it ends the path. A node named
      // START is still a node: its edges and entry resolve instead of adding unknown-node noise.
      if (node.name === END || indexOf.has(node.name)) continue;
    } else if (indexOf.has(node.name)) {
      report('NAME_DUPLICATE', `node "${node.name}" is declared more than once`, {
        node: node.name,
      });
      continue;
    }
    indexOf.set(node.name, nodes.length);
    nodes.push(node);
  }
  const n = nodes.length;
  const fields = new Set(def.fields);

  // Unknown targets get the closest declared name; the nodes left unreachable only because of
  // one are reported under it (see reachability below), not one UNREACHABLE each.
  let spelling: Spelling | undefined;
  let fieldSpelling: Spelling | undefined;
  const misnamed: (Misnamed & { readonly at: number })[] = [];
  const unknownTarget = (
    code: 'EDGE_TARGET_UNKNOWN' | 'ROUTE_TARGET_UNKNOWN' | 'ON_ERROR_UNKNOWN',
    from: number,
    target: string,
    message: string,
    fixIn: string,
  ) => {
    const name = nodes[from]!.name;
    const where = { node: name, edge: { from: name, to: target } };
    spelling ??= new Spelling(nodes.map((node) => node.name));
    const suggestion = spelling.suggest(target);
    if (suggestion === undefined) {
      report(code, message, where);
      return;
    }
    misnamed.push({ from, meant: indexOf.get(suggestion)!, at: out.length });
    report(code, `${message} (did you mean "${suggestion}"?)`, {
      ...where,
      hint: `write "${suggestion}" instead of "${target}" ${fixIn}`,
      details: { suggestion },
    });
  };

  // Exits per node. `exits` feeds reachability; `endsHere` marks nodes that are diagnosed
  // already or lead straight to END, so the trap check reports only loops with no way out.
  const edges = new EdgeCollector();
  const endsHere = new Uint8Array(n);
  const staticEdges = new Uint32Array(n);
  const routed = new Uint8Array(n);
  const fannedOut = new Uint8Array(n);
  const toEnd = new Uint8Array(n);

  for (const edge of def.edges) {
    const from = indexOf.get(edge.from);
    if (from === undefined) {
      report(
        'EDGE_SOURCE_UNKNOWN',
        `edge ${edge.from} -> ${edge.to} starts at an unknown node "${edge.from}"`,
        { edge },
      );
      continue;
    }
    staticEdges[from]!++;
    if (edge.to === END) {
      endsHere[from] = 1;
      toEnd[from] = 1;
      continue;
    }
    const to = indexOf.get(edge.to);
    if (to === undefined) {
      unknownTarget(
        'EDGE_TARGET_UNKNOWN',
        from,
        edge.to,
        `edge ${edge.from} -> ${edge.to} points at an unknown node "${edge.to}"`,
        `in .edge('${edge.from}', ...)`,
      );
      endsHere[from] = 1;
      continue;
    }
    edges.add(from, to, 'edge');
  }

  for (const route of def.routes) {
    const from = indexOf.get(route.from);
    if (from === undefined) {
      report('ROUTE_SOURCE_UNKNOWN', `a router is attached to an unknown node "${route.from}"`, {
        node: route.from,
      });
      continue;
    }
    const targets: readonly string[] = Array.isArray(route.targets) ? route.targets : [];
    if (routed[from]) {
      report('ROUTE_DUPLICATE', `node "${route.from}" has more than one router`, {
        node: route.from,
      });
    } else if (targets.length === 0) {
      report('ROUTE_NO_TARGETS', `the router of "${route.from}" declares no targets`, {
        node: route.from,
      });
      endsHere[from] = 1;
    }
    routed[from] = 1;
    // A second router's targets still count as exits and are still checked: the fix merges the
    // routers, so the nodes only it leads to are not unreachable.
    for (const target of targets) {
      if (target === END) {
        endsHere[from] = 1;
        toEnd[from] = 1;
        continue;
      }
      const to = indexOf.get(target);
      if (to === undefined) {
        unknownTarget(
          'ROUTE_TARGET_UNKNOWN',
          from,
          target,
          `the router of "${route.from}" declares an unknown target "${target}"`,
          `in the targets of .route('${route.from}', ...)`,
        );
        endsHere[from] = 1;
        continue;
      }
      edges.add(from, to, 'route');
    }
  }

  // A child node's parentGoto targets are ways on of the subgraph's node here, checked as the
  // targets of its router are: a parent goto is that node's route, chosen inside the child.
  for (const sent of parentGotos(def)) {
    const from = indexOf.get(sent.subgraph);
    if (from === undefined) continue;
    if (sent.target === END) {
      endsHere[from] = 1;
      toEnd[from] = 1;
      continue;
    }
    const to = indexOf.get(sent.target);
    if (to === undefined) {
      unknownTarget(
        'ROUTE_TARGET_UNKNOWN',
        from,
        sent.target,
        `node "${sent.node}" of subgraph "${sent.subgraph}" declares parentGoto "${sent.target}", which is not a node of graph "${def.name}"`,
        `in the parentGoto of "${sent.node}"`,
      );
      continue;
    }
    edges.add(from, to, 'route');
  }

  const fanOuts = resolveFanOuts(def, indexOf, report);
  for (const fanOut of fanOuts) {
    if (fannedOut[fanOut.from]) {
      report('FANOUT_CONFLICT', `node "${fanOut.def.from}" starts more than one fan-out`, {
        node: fanOut.def.from,
      });
    }
    fannedOut[fanOut.from] = 1;
    for (const entry of fanOut.entries) edges.add(fanOut.from, entry, 'fanOut');
  }
  // A fan-out that names an unknown node still counts as the way out it was meant to be.
  for (const fanOut of def.fanOuts) {
    const from = indexOf.get(fanOut.from);
    if (from !== undefined && !fannedOut[from]) {
      fannedOut[from] = 1;
      endsHere[from] = 1;
    }
  }

  for (let i = 0; i < n; i++) {
    const node = nodes[i]!;
    const name = node.name;
    if (node.terminal) {
      endsHere[i] = 1;
      toEnd[i] = 1;
    }
    // Its way out is its parent, which checks the targets: within its own graph it ends.
    const sends = Array.isArray(node.parentGoto);
    if (sends) endsHere[i] = 1;
    if (fannedOut[i] && (staticEdges[i]! > 0 || routed[i])) {
      report('FANOUT_CONFLICT', `node "${name}" has a fan-out and also an edge or a router`, {
        node: name,
      });
    }
    if (staticEdges[i]! > 1) {
      report(
        'EDGE_MULTIPLE',
        `node "${name}" has ${staticEdges[i]} static edges; a node continues to one place`,
        {
          node: name,
        },
      );
    }
    if (staticEdges[i]! > 0 && routed[i]) {
      report('EDGE_AND_ROUTE', `node "${name}" has both a static edge and a router`, {
        node: name,
      });
    }
    if (staticEdges[i] === 0 && !routed[i] && !fannedOut[i] && !node.terminal && !sends) {
      report('DEAD_END', `node "${name}" has no way out and is not declared terminal`, {
        node: name,
      });
      endsHere[i] = 1;
    }
    if (node.onError !== undefined) {
      const to = indexOf.get(node.onError);
      if (to === undefined) {
        unknownTarget(
          'ON_ERROR_UNKNOWN',
          i,
          node.onError,
          `onError of "${name}" points at an unknown node "${node.onError}"`,
          `in the onError of "${name}"`,
        );
      } else {
        edges.add(i, to, 'onError');
      }
    }
    checkNodeOptions(node, report);
    if (Array.isArray(node.answers)) {
      for (const field of node.answers) {
        if (fields.has(field)) continue;
        fieldSpelling ??= new Spelling(def.fields);
        const suggestion = fieldSpelling.suggest(field);
        report(
          'ANSWER_UNMAPPED',
          `person node "${name}" has no update, and its answer field "${field}" is not a state field${suggestion === undefined ? '' : ` (did you mean "${suggestion}"?)`}`,
          { node: name, ...(suggestion !== undefined && { details: { suggestion } }) },
        );
      }
    }
    for (const key of ['reads', 'writes'] as const) {
      const list = node[key] ?? [];
      if (!Array.isArray(list)) continue; // reported by checkNodeOptions
      for (const field of list) {
        if (!fields.has(field)) {
          report('FIELD_UNKNOWN', `node "${name}" ${key} "${field}", which is not a state field`, {
            node: name,
          });
        }
      }
    }
  }
  if (!isPositiveInt(def.version)) {
    report(
      'OPTION_INVALID',
      `the graph has version = ${show(def.version)}; it must be a whole number >= 1`,
    );
  }
  for (const field of def.fields) {
    // A subgraph keeps its child's state under `@name` while it runs; nothing shows those.
    if (field.startsWith('@'))
      report(
        'NAME_RESERVED',
        `state field "${field}" starts with "@", which marks a subgraph's private slot`,
      );
  }
  for (const field of Object.keys(def.reducers)) {
    if (!fields.has(field))
      report('FIELD_UNKNOWN', `a reducer is declared for "${field}", which is not a state field`);
  }
  checkSubgraphs(def, report, validate);
  checkLimits(def, report);

  const exits = edges.compress(n);
  if (def.untracked !== undefined) checkUntracked(def, nodes, exits, report);

  // Entry and reachability.
  let reachable: Uint8Array | null = null;
  if (def.entry === null) {
    report('ENTRY_MISSING', 'the graph has no entry node');
  } else if (!indexOf.has(def.entry)) {
    report('ENTRY_UNKNOWN', `the entry "${def.entry}" is not a declared node`, { node: def.entry });
  } else {
    reachable = mark([indexOf.get(def.entry)!], exits);
    const blamed = misnamed.length > 0 ? blame(misnamed, reachable, exits) : undefined;
    if (blamed !== undefined) underMistakes(out, misnamed, blamed, nodes);
    for (let i = 0; i < n; i++) {
      if (!reachable[i] && (blamed === undefined || blamed[i] === -1)) {
        report(
          'UNREACHABLE',
          `node "${nodes[i]!.name}" cannot be reached from the entry "${def.entry}"`,
          {
            node: nodes[i]!.name,
          },
        );
      }
    }
  }

  // Traps: reachable nodes from which no path leads to END (or to a problem reported above).
  const seeds: number[] = [];
  for (let i = 0; i < n; i++) if (endsHere[i]) seeds.push(i);
  const canFinish = mark(seeds, reverse(exits));
  for (let i = 0; i < n; i++) {
    if (!canFinish[i] && (reachable === null || reachable[i])) {
      report('TRAP', `from node "${nodes[i]!.name}" no path leads to END`, {
        node: nodes[i]!.name,
      });
    }
  }

  // Cycles that can repeat forever: cycles among nodes without a visit cap. Such a cycle lies
  // inside a cyclic component of the whole graph, so the uncapped search only looks there; a
  // graph without cycles (a long chain) pays for one walk, not two.
  const inCycle = new Uint8Array(n);
  const repeatable = new Set<string>();
  for (const component of cyclicComponents(exits, () => true)) {
    for (const i of component) {
      inCycle[i] = 1;
      if (findRepeatable) repeatable.add(nodes[i]!.name);
    }
  }
  const uncapped = (i: number) => inCycle[i] === 1 && nodes[i]!.visits === undefined;
  for (const component of cyclicComponents(exits, uncapped)) {
    const names = component.map((i) => nodes[i]!.name);
    const shown = names.length > 8 ? `${names.slice(0, 8).join(' -> ')} ...` : names.join(' -> ');
    report('CYCLE_UNCAPPED', `the cycle ${shown} has no visit cap on any of its nodes`, {
      node: names[0]!,
    });
  }
  let incoming: Incoming | undefined;
  checkParallel(
    {
      def,
      nodes,
      exits,
      incoming: () => (incoming ??= edges.incoming(n)),
      toEnd,
      entry: def.entry === null ? undefined : indexOf.get(def.entry),
      report,
    },
    fanOuts,
    findRepeatable ? repeatable : undefined,
  );
  return { diagnostics: out, repeatable };
}

/**
 * Adds to each misnamed edge's diagnostic the nodes unreachable only because of it: in the
 * message (the first few) and in `details.unreachable` (all, in declaration order).
 */
function underMistakes(
  out: Diagnostic[],
  misnamed: readonly { readonly at: number }[],
  blamed: Int32Array,
  nodes: readonly NodeDef[],
): void {
  const lost: string[][] = misnamed.map(() => []);
  for (let i = 0; i < blamed.length; i++)
    if (blamed[i] !== -1) lost[blamed[i]!]!.push(nodes[i]!.name);
  misnamed.forEach(({ at }, k) => {
    const names = lost[k]!;
    if (names.length === 0) return;
    const d = out[at]!;
    const shown = names.length > 8 ? `${names.slice(0, 8).join(', ')}, ...` : names.join(', ');
    const message =
      names.length === 1
        ? `${d.message}, so "${names[0]}" cannot be reached`
        : `${d.message}, so ${names.length} nodes cannot be reached: ${shown}`;
    out[at] = { ...d, message, details: { ...d.details, unreachable: names } };
  });
}

/** Breadth-first marking from `seeds` along `adjacency`. */
function mark(seeds: readonly number[], adjacency: Adjacency): Uint8Array {
  const { start, next } = adjacency;
  const seen = new Uint8Array(start.length - 1);
  const queue = [...seeds];
  for (const s of seeds) seen[s] = 1;
  for (let head = 0; head < queue.length; head++) {
    const v = queue[head]!;
    for (let k = start[v]!; k < start[v + 1]!; k++) {
      const w = next[k]!;
      if (seen[w]) continue;
      seen[w] = 1;
      queue.push(w);
    }
  }
  return seen;
}
