import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { publicEntries } from './load-graph.js';

it("a graph file's import of any public entry goes to the command's copy: the hooks know every export", () => {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    exports: Record<string, string | { import: string }>;
  };
  const exported = Object.fromEntries(
    Object.entries(pkg.exports)
      .filter(([key]) => key !== './package.json')
      .map(([key, value]) => [
        key === '.' ? 'waymark' : `waymark/${key.slice(2)}`,
        (value as { import: string }).import.replace('./dist/', ''),
      ]),
  );
  expect(publicEntries).toEqual(exported);
});
