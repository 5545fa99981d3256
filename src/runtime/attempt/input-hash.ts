import { createHash } from 'node:crypto';
import type { RuntimeNode } from '../../graph/compiled.js';
import type { Activation } from '../core/snapshot.js';

/**
 * The input hash of an activation, `node@version#sha256`: the node's name and version, and a
 * digest of the fields it declares in `reads` and of its item in a map branch. Two activations
 * with the same hash compute the same update, so one's recorded output can stand in for the
 * other's run. A node without `reads` has no input hash and is never reused: hashing the whole
 * state at every step would make a step cost the size of the state, not of its update.
 *
 * An untracked field the node reads is not hashed (`node.hashed`): its value is not recorded, so
 * a rewound or later run, which starts it from its default, could never match it.
 *
 * A workspace node's inputs include where its working copy starts: the patch in its field (in
 * its reads), its repository and base, and in a `patches` join the branches' patches. One that
 * starts from a revision that can move (`main`, `HEAD`) has no hash: what it starts from is
 * known only when it runs.
 */
export function inputHash(
  node: RuntimeNode,
  state: Readonly<Record<string, unknown>>,
  item: unknown,
  activation?: Pick<Activation, 'join'>,
  context?: unknown,
): string | undefined {
  const reads = node.def.reads;
  if (reads === undefined) return undefined;
  const inputs: Record<string, unknown> = {};
  for (const field of node.hashed ?? reads) inputs[field] = state[field];
  const parts: unknown[] = [inputs, item === undefined ? null : item];
  if (node.def.readsContext === true) parts.push({ context: context ?? null });
  const workspace = node.def.workspace;
  if (workspace !== undefined) {
    const joined = activation?.join?.patches;
    const recorded = state[workspace.patch] ?? null;
    const pinned = /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(workspace.base ?? '');
    if (joined === undefined && recorded === null && !pinned) return undefined;
    parts.push({ repo: workspace.repo, base: workspace.base ?? 'HEAD', joined: joined ?? null });
  }
  const text = JSON.stringify(parts);
  const digest = createHash('sha256').update(text).digest('base64url');
  // Readable in the history, and the whole reuse key: node, version and digest.
  return `${node.def.name}@${node.def.version}#${digest}`;
}
