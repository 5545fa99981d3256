import { existsSync, readdirSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { errorCodes } from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';
import { sandbox } from '../cli/support.js';
import { fuzzParameters, fuzzTimeout } from './settings.js';

// Random graph files handed to the real `waymark` binary: syntax errors, wrong exports, modules
// that throw or reject while they load, builders that do not compile, and graphs that do. Each
// call starts node and tsx, so the default count is small (seconds); WAYMARK_FUZZ_RUNS runs more.
// Whatever the file: an exit code docs/cli.md lists, a coded error line and no stack trace when
// it fails, and nothing written to the store when the command could not act on it (exit 2).

const header = "import { z } from 'zod';\nimport { END, graph } from 'waymark';\n";
const good =
  "graph('fuzzed', { state: z.object({ n: z.number().default(0) }) }).node('a', (s) => ({ n: s.n + 1 })).edge('a', END).entry('a')";
const junk = fc.string({
  maxLength: 30,
  unit: fc.constantFrom(
    '{',
    '}',
    '(',
    ')',
    ';',
    "'",
    '`',
    'a',
    ' ',
    '\n',
    '=',
    '/',
    '*',
    'export',
    'default',
    '\\u0000',
    'é',
  ),
});

/** A graph file: a template, sometimes with junk spliced into it. */
const file = fc
  .record({
    template: fc.constantFrom(
      `${header}export default ${good};\n`,
      `${header}export default ${good}.compile();\n`,
      `${header}export default graph('dead', { state: z.object({}) }).node('a', () => ({})).node('b', () => ({})).entry('a');\n`,
      `${header}export const notDefault = ${good};\n`,
      'export default 42;\n',
      'export default null;\n',
      'export default { name: "x", nodes: [] };\n',
      'export default () => 1;\n',
      "throw new Error('the configuration service is unreachable');\n",
      "await Promise.reject(new Error('rejected while loading'));\n",
      "import './no-such-module.js';\nexport default 1;\n",
      "throw 'a thrown string';\n",
      'throw null;\n',
      `${header}export default graph('x', {;\n`,
      '',
    ),
    splice: fc.option(fc.tuple(fc.nat(400), junk), { freq: 3, nil: undefined }),
    ext: fc.constantFrom('.ts', '.mjs', '.js'),
  })
  .map(({ template, splice, ext }) => {
    if (splice === undefined) return { text: template, ext };
    const at = splice[0] % (template.length + 1);
    return { text: template.slice(0, at) + splice[1] + template.slice(at), ext };
  });

const codes = new Set<string>(errorCodes);

/** How many runs the store in `db` holds (0 when there is no store at all). */
async function runsIn(db: string): Promise<number> {
  if (!existsSync(db)) return 0;
  const store = new SqliteStore({ path: db });
  try {
    return (await store.listRuns()).length;
  } finally {
    await store.close();
  }
}

describe('fuzzed graph files on the command line', () => {
  it(
    'validate and run: an exit code from docs/cli.md, a coded error without a stack trace, nothing recorded when refused',
    async () => {
      let n = 0;
      await fc.assert(
        fc.asyncProperty(file, async ({ text, ext }) => {
          const box = sandbox();
          const path = box.write(`graph-${n++}${ext}`, text);
          for (const command of ['validate', 'run'] as const) {
            const out = await box.waymark([command, path]);
            const allowed = command === 'validate' ? [0, 1, 2] : [0, 1, 2, 3];
            expect(allowed, `${command} exited ${out.code}:\n${out.stderr}`).toContain(out.code);
            expect(out.stderr, text).not.toMatch(/^\s+at /m);
            if (out.code !== 0 && !(command === 'run' && out.code === 3)) {
              const coded = [...out.stderr.matchAll(/\b[A-Z][A-Z_]{2,}\b/g)].some((m) =>
                codes.has(m[0]),
              );
              expect(coded, `${command} gave no code:\n${out.stderr}`).toBe(true);
            }
            if (command === 'run' && out.code === 2) expect(await runsIn(box.db)).toBe(0);
          }
          // Nothing but the graph file and what the store keeps appears beside it.
          const extra = readdirSync(box.dir).filter(
            (f) => !f.startsWith('graph-') && !f.startsWith('waymark.db') && f !== '.waymark',
          );
          expect(extra).toEqual([]);
        }),
        fuzzParameters(3),
      );
    },
    fuzzTimeout(120_000),
  );
});
