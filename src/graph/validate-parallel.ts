import type { Report } from './diagnostic.js';
import type { Adjacency } from './internal/adjacency.js';
import type { ResolvedFanOut, Structure } from './internal/structure.js';
import type { GraphDef, JoinPolicy, NodeDef } from './types.js';
import { checkBoundaries } from './validate-boundaries.js';
import { isPositiveInt, show } from './validate-options.js';

/** Resolves fan-out declarations to node indexes, reporting the ones naming unknown nodes. */
export function resolveFanOuts(
  def: GraphDef,
  indexOf: ReadonlyMap<string, number>,
  report: Report,
): ResolvedFanOut[] {
  const fields = new Set(def.fields);
  const out: ResolvedFanOut[] = [];
  for (const fanOut of def.fanOuts) {
    const from = indexOf.get(fanOut.from);
    const where = { node: fanOut.from };
    const unknown = (role: string, name: string) =>
      report(
        'FANOUT_NODE_UNKNOWN',
        `the fan-out at "${fanOut.from}" names an unknown ${role} "${name}"`,
        {
          node: fanOut.from,
          edge: { from: fanOut.from, to: name },
        },
      );
    if (from === undefined) {
      report('FANOUT_NODE_UNKNOWN', `a fan-out starts at an unknown node "${fanOut.from}"`, where);
    }
    const names = fanOut.kind === 'fixed' ? fanOut.branches : [fanOut.branch];
    if (!Array.isArray(names) || names.length === 0) {
      report('FANOUT_EMPTY', `the fan-out at "${fanOut.from}" declares no branches`, where);
      continue;
    }
    const resolve = (role: string, name: string) => {
      const index = indexOf.get(name);
      if (index === undefined) unknown(role, name);
      return index ?? -1;
    };
    const entries = names.map((name) => resolve('branch', name));
    const join = resolve('join', fanOut.join);
    if (fanOut.kind === 'map' && !fields.has(fanOut.over)) {
      report(
        'FIELD_UNKNOWN',
        `the map at "${fanOut.from}" is over "${fanOut.over}", which is not a state field`,
        where,
      );
    }
    if (fanOut.concurrency !== undefined && !isPositiveInt(fanOut.concurrency)) {
      report(
        'OPTION_INVALID',
        `the fan-out at "${fanOut.from}" has concurrency = ${show(fanOut.concurrency)}; it must be a whole number >= 1`,
        where,
      );
    }
    if (from !== undefined && join !== -1 && !entries.includes(-1))
      out.push({ def: fanOut, from, entries, join });
  }
  return out;
}

/**
 * The checks that need parallel branches: every branch reaches its join without leaving the
 * fan-out's region, joins belong to exactly one fan-out, a quorum is reachable, and branches
 * that run side by side do not write the same field without a reducer. Warns about branch nodes
 * that declare no `reads` or no `writes`. Collects the nodes of every branch into `branchNodes`
 * when given: they run once per branch.
 */
export function checkParallel(
  s: Structure,
  fanOuts: readonly ResolvedFanOut[],
  branchNodes?: Set<string>,
): void {
  const { nodes, report } = s;
  const startsFanOut = new Set(fanOuts.map((f) => f.from));
  const owners = new Map<number, string[]>();
  const inBranch = new Uint8Array(nodes.length);
  for (const fanOut of fanOuts) {
    const fromName = nodes[fanOut.from]!.name;
    const joinNode = nodes[fanOut.join]!;
    owners.set(fanOut.join, [...(owners.get(fanOut.join) ?? []), fromName]);
    const escaped = new Set<number>();
    const writes: (Set<string> | 'all')[] = [];
    const regions: Set<number>[] = [];
    fanOut.entries.forEach((entry) => {
      const { region, reachesJoin } = regionOf(entry, fanOut.join, s.exits);
      regions.push(region);
      // A fan-out node inside a region (a nested fan-out, or one a branch loops back to) is
      // not warned about as a branch node: its own branches are.
      for (const i of region) if (!startsFanOut.has(i)) inBranch[i] = 1;
      if (branchNodes) for (const i of region) branchNodes.add(nodes[i]!.name);
      const entryName = nodes[entry]!.name;
      if (!reachesJoin) {
        report(
          'FANOUT_JOIN_UNREACHABLE',
          `branch "${entryName}" of the fan-out at "${fromName}" never reaches its join "${joinNode.name}"`,
          {
            node: fromName,
            edge: { from: entryName, to: joinNode.name },
          },
        );
      }
      for (const i of region) {
        if (escaped.has(i)) continue;
        const name = nodes[i]!.name;
        const leaves =
          i === fanOut.from
            ? `loops back to "${fromName}"`
            : s.toEnd[i]
              ? `reaches END at "${name}"`
              : undefined;
        if (leaves !== undefined) {
          escaped.add(i);
          report(
            'BRANCH_ESCAPES',
            `branch "${entryName}" of the fan-out at "${fromName}" ${leaves} without passing its join "${joinNode.name}"`,
            {
              node: name,
            },
          );
        }
      }
      writes.push(writesOf(region, nodes));
    });
    checkBoundaries(s, fanOut, regions, escaped.size > 0);
    const policy: JoinPolicy = joinNode.join?.policy ?? { kind: 'all' };
    if (
      policy.kind === 'quorum' &&
      fanOut.def.kind === 'fixed' &&
      policy.k > fanOut.entries.length
    ) {
      report(
        'QUORUM_TOO_LARGE',
        `join "${joinNode.name}" waits for ${policy.k} successes but the fan-out at "${fromName}" starts ${fanOut.entries.length} branches`,
        {
          node: joinNode.name,
        },
      );
    }
    // Only joins that merge several branches can see two writes to one field. A patches join
    // merges its patch field three-way itself: the branches may all write that one.
    if (
      policy.kind === 'all' ||
      policy.kind === 'patches' ||
      (policy.kind === 'quorum' && policy.k > 1)
    ) {
      const merged = policy.kind === 'patches' ? joinNode.workspace?.patch : undefined;
      checkWriteConflicts(s, fanOut, writes, merged);
    }
  }
  nodes.forEach((node, i) => {
    if (inBranch[i]) warnUndeclared(node, report);
    if (node.join !== undefined) checkJoinOptions(node, report);
    const named = owners.get(i) ?? [];
    if (named.length > 1) {
      report(
        'JOIN_SHARED',
        `join "${node.name}" is the join of the fan-outs at ${named.map((n) => `"${n}"`).join(', ')}`,
        {
          node: node.name,
        },
      );
    } else if (named.length === 0 && node.join !== undefined) {
      report(
        'JOIN_WITHOUT_FANOUT',
        `node "${node.name}" is declared a join but no fan-out leads to it`,
        { node: node.name },
      );
    }
  });
}

/** The nodes a branch can run, from its entry up to (not including) the join. */
function regionOf(entry: number, join: number, exits: Adjacency) {
  const region = new Set<number>();
  let reachesJoin = false;
  if (entry === join) return { region, reachesJoin: true };
  const queue = [entry];
  region.add(entry);
  for (let head = 0; head < queue.length; head++) {
    const v = queue[head]!;
    for (let k = exits.start[v]!; k < exits.start[v + 1]!; k++) {
      const w = exits.next[k]!;
      if (w === join) {
        reachesJoin = true;
      } else if (!region.has(w)) {
        region.add(w);
        queue.push(w);
      }
    }
  }
  return { region, reachesJoin };
}

// A node without `writes` may write anything, so it conflicts with every sibling.
function writesOf(region: ReadonlySet<number>, nodes: readonly NodeDef[]): Set<string> | 'all' {
  const fields = new Set<string>();
  for (const i of region) {
    const writes = nodes[i]!.writes;
    if (!Array.isArray(writes)) return 'all';
    for (const field of writes) fields.add(field);
  }
  return fields;
}

function checkWriteConflicts(
  s: Structure,
  fanOut: ResolvedFanOut,
  writes: readonly (Set<string> | 'all')[],
  merged: string | undefined,
): void {
  const { def, nodes, report } = s;
  const fromName = nodes[fanOut.from]!.name;
  const unreduced = (fields: Iterable<string>) =>
    [...fields].filter((f) => def.reducers[f] === undefined && f !== merged);
  // A branch without `writes` may write any field, but a field with a reducer merges whatever
  // the branches wrote: only the fields without one can conflict.
  const anyUnreduced = unreduced(def.fields).length > 0;
  const where = { node: fromName };
  const conflict = (between: string, fields: readonly string[]) => {
    for (const field of fields) {
      report('WRITE_CONFLICT', `${between} can both write "${field}", which has no reducer`, where);
    }
  };
  if (fanOut.def.kind === 'map') {
    // Every item runs the same branch, so a field it writes is written by all of them at once.
    const branch = nodes[fanOut.entries[0]!]!.name;
    const w = writes[0]!;
    const between = `the branches of the map at "${fromName}" (one per item, starting at "${branch}")`;
    if (w === 'all' && anyUnreduced)
      report(
        'WRITE_CONFLICT',
        `${between} declare no writes, so they may all write any field`,
        where,
      );
    else if (w !== 'all') conflict(between, unreduced(w));
    return;
  }
  for (let a = 0; a < writes.length; a++) {
    for (let b = a + 1; b < writes.length; b++) {
      const [wa, wb] = [writes[a]!, writes[b]!];
      const between = `branches "${nodes[fanOut.entries[a]!]!.name}" and "${nodes[fanOut.entries[b]!]!.name}" of the fan-out at "${fromName}"`;
      if (wa === 'all' && wb === 'all') {
        if (!anyUnreduced) continue;
        report(
          'WRITE_CONFLICT',
          `${between} both declare no writes, so they may write the same fields`,
          where,
        );
      } else if (wa === 'all' || wb === 'all') {
        conflict(between, unreduced(wa === 'all' ? (wb as Set<string>) : wa));
      } else {
        conflict(between, unreduced([...wa].filter((f) => wb.has(f))));
      }
    }
  }
}

// A branch node runs beside its siblings: what it may read and write is what a review of the
// fan-out needs to see, so leaving it open is worth a warning (never an error: it still runs).
function warnUndeclared(node: NodeDef, report: Report): void {
  const where = { node: node.name };
  if (node.reads === undefined) {
    report(
      'READS_UNDECLARED',
      `node "${node.name}" runs in a parallel branch and declares no reads, so it sees every field`,
      where,
    );
  }
  if (node.writes === undefined) {
    report(
      'WRITES_UNDECLARED',
      `node "${node.name}" runs in a parallel branch and declares no writes, so it may write any field`,
      where,
    );
  }
}

function checkJoinOptions(node: NodeDef, report: Report): void {
  const bad = (option: string, value: unknown, rule: string) =>
    report('OPTION_INVALID', `node "${node.name}" has ${option} = ${show(value)}; ${rule}`, {
      node: node.name,
    });
  const { policy, tolerate } = node.join!;
  const kind = typeof policy === 'object' && policy !== null ? policy.kind : undefined;
  if (
    kind !== 'all' &&
    kind !== 'any' &&
    kind !== 'quorum' &&
    kind !== 'best' &&
    kind !== 'patches'
  ) {
    bad('join', policy, 'it must be all(), any(), quorum(k), best(score) or patches()');
  } else if (policy.kind === 'quorum' && !isPositiveInt(policy.k)) {
    bad('join quorum k', policy.k, 'it must be a whole number >= 1');
  } else if (policy.kind === 'patches' && node.workspace === undefined) {
    bad(
      'join',
      'patches()',
      "the join node merges the branches' patches into its own working copy: declare its workspace, with the branches' patch field",
    );
  }
  if (tolerate === undefined) return;
  const percent = typeof tolerate === 'string' ? /^(\d+(?:\.\d+)?)%$/.exec(tolerate) : null;
  const ok = percent
    ? Number(percent[1]) <= 100
    : Number.isInteger(tolerate) && (tolerate as number) >= 0;
  if (!ok)
    bad('tolerate', tolerate, "it must be a whole number >= 0 or a percentage such as '10%'");
}
