import { describe, it } from 'vitest';

// Tests that need something outside the repository (a PostgreSQL server, Debian's Chromium):
// without it they skip with one line of reason, except in CI (CI=true), where they must run,
// so there a missing one fails the file instead.

/**
 * `describe` when `skipReason` is undefined; otherwise a describe skipped with its reason (told
 * once on stderr), or in CI one failing test that says what is missing.
 */
export function describeNeeding(
  what: string,
  skipReason: string | undefined,
): (name: string, body: () => void) => void {
  if (skipReason === undefined) return describe;
  if (process.env.CI === 'true') {
    return (name) =>
      describe(name, () => {
        it(`needs ${what} (CI=true: never skipped)`, () => {
          throw new Error(skipReason);
        });
      });
  }
  let told = false;
  return (name, body) => {
    if (!told) process.stderr.write(`skipped: ${skipReason}\n`);
    told = true;
    describe.skip(`${name} [skipped: ${skipReason}]`, body);
  };
}
