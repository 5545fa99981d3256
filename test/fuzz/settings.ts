// Every fuzz suite runs a fixed seed and a bounded count by default, so CI takes seconds and a
// failure is the same failure on every machine; WAYMARK_FUZZ_RUNS=<n> (and WAYMARK_FUZZ_SEED)
// turn any suite into a long run: `WAYMARK_FUZZ_RUNS=200000 npx vitest run test/fuzz`.

/** The seed of every property (fast-check prints it, with the path, on a failure). */
export const fuzzSeed = Number(process.env.WAYMARK_FUZZ_SEED ?? 20_261_203);

/** Runs of a property: the suite's default, or WAYMARK_FUZZ_RUNS. */
export function fuzzRuns(byDefault: number): number {
  const asked = Number(process.env.WAYMARK_FUZZ_RUNS);
  return Number.isInteger(asked) && asked > 0 ? asked : byDefault;
}

/** fast-check parameters for a property of this suite. */
export function fuzzParameters(byDefault: number) {
  return { seed: fuzzSeed, numRuns: fuzzRuns(byDefault), endOnFailure: true } as const;
}

/** The per-test timeout: generous by default, unbounded in spirit for a long run. */
export function fuzzTimeout(byDefaultMs: number): number {
  return process.env.WAYMARK_FUZZ_RUNS === undefined ? byDefaultMs : 24 * 3_600_000;
}
