/**
 * The longest delay a Node.js timer honours (2^31 - 1 ms, about 24.8 days): `setTimeout` runs any
 * longer delay after 1 ms instead. Timeouts and backoffs are checked or capped against it.
 */
export const maxTimerMs = 2_147_483_647;
