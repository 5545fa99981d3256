import type { Via } from './internal/adjacency.js';
import type { ResolvedFanOut, Structure } from './internal/structure.js';

const declared: Readonly<Record<Via, string>> = {
  edge: 'edge',
  route: 'router target',
  onError: 'onError route',
  fanOut: 'fan-out branch',
};

/**
 * The ways into and out of one fan-out's branches that the runtime cannot honour. A branch
 * runs only when its fan-out starts it: the runtime gives each started branch a token its join
 * counts. A node of a branch reached any other way (a loop from after the join back into the
 * branch, an edge that skips the fan-out node, the run's entry) runs without a token, and its
 * join then runs as an ordinary node, merging nothing: `BRANCH_ENTERED`. A branch node whose
 * `onError` names the join hands its error to the join as if the join were any node, outside
 * the barrier, and the other branches' updates are lost: `ON_ERROR_TO_JOIN`. Loops inside one
 * branch are fine: the branch carries its token around them.
 *
 * `regions` are the nodes of each branch (entry up to the join, not including it).
 * `leaky` says a branch already escapes (`BRANCH_ESCAPES`): its region then
 * holds nodes outside the fan-out, whose ordinary ways in are not mistakes of their own, so
 * the ways in are checked again once that is fixed.
 */
export function checkBoundaries(
  s: Structure,
  fanOut: ResolvedFanOut,
  regions: readonly ReadonlySet<number>[],
  leaky: boolean,
): void {
  const { nodes, report } = s;
  const from = nodes[fanOut.from]!.name;
  const join = nodes[fanOut.join]!.name;
  const what = fanOut.def.kind === 'map' ? 'map' : 'fan-out';
  const details = { fanOut: from, join };
  const inside = new Set<number>();
  for (const region of regions) for (const i of region) inside.add(i);
  // The branch a node is in, for the message: the first (in declaration order) that runs it.
  const branchOf = (i: number) => nodes[fanOut.entries[regions.findIndex((r) => r.has(i))]!]!.name;

  for (const i of inside) {
    const node = nodes[i]!;
    if (node.onError !== join) continue;
    report(
      'ON_ERROR_TO_JOIN',
      `onError of "${node.name}" points at "${join}", the join of its ${what} at "${from}": the error would run "${join}" as an ordinary node, outside its barrier, and every branch's update would be lost`,
      {
        node: node.name,
        edge: { from: node.name, to: join },
        hint: `remove the onError: a failure then fails the branch, and the tolerate of "${join}" decides whether the join goes on (to handle it, route it to a node of the branch that leads to "${join}")`,
        details: { ...details, via: 'onError' },
      },
    );
  }
  if (leaky) return;

  const hint = `point it at the ${what} node "${from}" instead: a branch runs only when its ${what} starts it`;
  const consequence = `would run outside the ${what}, and its join "${join}" as an ordinary node`;
  if (s.entry !== undefined && inside.has(s.entry)) {
    const name = nodes[s.entry]!.name;
    report(
      'BRANCH_ENTERED',
      `the run starts at "${name}", inside branch "${branchOf(s.entry)}" of the ${what} at "${from}": "${name}" ${consequence}`,
      {
        node: name,
        hint: `start the run at the ${what} node "${from}" or a node before it: a branch runs only when its ${what} starts it`,
        details: { ...details, via: 'entry' },
      },
    );
  }
  const incoming = s.incoming();
  const seen = new Set<string>();
  for (const i of inside) {
    const to = nodes[i]!.name;
    for (let k = incoming.start[i]!; k < incoming.start[i + 1]!; k++) {
      const source = incoming.from[k]!;
      // The fan-out's own links are its branches; any other link from it is a FANOUT_CONFLICT.
      if (source === fanOut.from || inside.has(source)) continue;
      const via = incoming.via[k]!;
      const name = nodes[source]!.name;
      const key = `${source} ${i} ${via}`;
      if (seen.has(key)) continue;
      seen.add(key);
      report(
        'BRANCH_ENTERED',
        `${declared[via]} ${name} -> ${to} enters branch "${branchOf(i)}" of the ${what} at "${from}" from outside it: "${to}" ${consequence}`,
        { node: name, edge: { from: name, to }, hint, details: { ...details, via } },
      );
    }
  }
}
