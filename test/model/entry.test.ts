import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';

const src = new URL('../../src/', import.meta.url).pathname;
const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );

it('only waymark/model loads the AI SDK: no file outside src/model imports ai or a provider', () => {
  const offenders = files(src)
    .filter((f) => !relative(src, f).startsWith('model/'))
    .filter((f) =>
      /from '(ai|@ai-sdk\/[^']+)'|import\('(ai|@ai-sdk)/.test(readFileSync(f, 'utf8')),
    );
  expect(offenders).toEqual([]);
});

it('waymark/model is its own export, and the AI SDK packages are optional peers', () => {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  // `default` lets a CommonJS file require() it too (Node.js >= 20.19 loads ES modules so).
  expect(pkg.exports['./model']).toEqual({
    types: './dist/model/index.d.ts',
    import: './dist/model/index.js',
    default: './dist/model/index.js',
  });
  for (const name of ['ai', '@ai-sdk/openai', '@ai-sdk/anthropic', '@ai-sdk/openai-compatible']) {
    expect(pkg.peerDependenciesMeta[name]).toEqual({ optional: true });
    expect(pkg.devDependencies[name]).toMatch(/^\d+\.\d+\.\d+$/);
    expect(pkg.dependencies[name]).toBeUndefined();
  }
});
