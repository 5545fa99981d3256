import { createHash } from 'node:crypto';
import type { RuntimeNode } from '../graph/compiled.js';

/**
 * The input hash of an activation, `node@version#sha256`: the node's name and version, and a
 * digest of the fields it declares in `reads` and of its item in a map branch. Two activations
 * with the same hash compute the same update, so one's recorded output can stand in for the
 * other's run. A node without `reads` has no input hash and is never reused: hashing the whole
 * state at every step would make a step cost the size of the state, not of its update.
 */
export function inputHash(
  node: RuntimeNode,
  state: Readonly<Record<string, unknown>>,
  item: unknown,
): string | undefined {
  const reads = node.def.reads;
  if (reads === undefined) return undefined;
  const inputs: Record<string, unknown> = {};
  for (const field of reads) inputs[field] = state[field];
  const text = JSON.stringify([inputs, item === undefined ? null : item]);
  const digest = createHash('sha256').update(text).digest('base64url');
  // Readable in the history, and the whole reuse key: node, version and digest.
  return `${node.def.name}@${node.def.version}#${digest}`;
}
