import type { NodeContext } from '../../graph/types.js';

/**
 * Where an attempt of a rate-limited node keeps the admission of its calls after the first (the
 * attempt's own admission covers that one): a model node's schema retries, an agent's turns.
 * A symbol, not a member of NodeContext: only model nodes ask, and users never need to.
 */
export const callAdmission = Symbol.for('waymark.callAdmission');

/** Admits the attempt's `call`-th provider call (2 and up), waiting inside the attempt if full. */
export type AdmitCall = (call: number) => Promise<void>;

/**
 * The attempt's call admission, if its node is rate-limited and its store keeps rates.
 *
 * @example
 * await admissionOf(ctx)?.(2); // before the second call of the attempt
 */
export function admissionOf(ctx: NodeContext): AdmitCall | undefined {
  return (ctx as unknown as { [callAdmission]?: AdmitCall })[callAdmission];
}
