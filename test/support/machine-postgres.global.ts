import { machineStartedAt } from './machine-postgres.js';

// vitest's global setup: the run fails if the machine's PostgreSQL was stopped or restarted
// while the test files ran (its start time moved), whichever file did it. vitest reports an
// error thrown from a teardown but still exits 0, so the teardown sets the exit code itself.

export async function setup(): Promise<() => Promise<void>> {
  const before = await machineStartedAt();
  return async () => {
    if (before === undefined) return;
    const after = await machineStartedAt();
    if (after === before) return;
    console.error(
      `FAIL: the machine's PostgreSQL was ${after === undefined ? 'stopped' : 'restarted'} during the test run (started ${new Date(before).toISOString()} before it, ${after === undefined ? 'unreachable' : new Date(after).toISOString()} after): a test restarts only a server it started (test/support/throwaway-postgres.ts)`,
    );
    process.exitCode = 1;
  };
}
