import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = fileURLToPath(new URL('../../src/', import.meta.url));

/** Every package a source file reaches through its static imports, and through the files it imports. */
function packagesReachedFrom(entry: string): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const [, spec] of text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)) {
      if (spec!.startsWith('.')) visit(join(dirname(file), spec!.replace(/\.js$/, '.ts')));
      else packages.add(spec!);
    }
  };
  visit(join(src, entry));
  return packages;
}

describe('the waymark/sqlite entry', () => {
  it('is the only entry that loads better-sqlite3: users of the memory store need not install it', () => {
    expect(packagesReachedFrom('index.ts')).not.toContain('better-sqlite3');
    expect(packagesReachedFrom('testing/index.ts')).not.toContain('better-sqlite3');
    expect(packagesReachedFrom('sqlite.ts')).toContain('better-sqlite3');
  });

  it('is exported by package.json; better-sqlite3 is a dependency, for the waymark command', () => {
    const pkg = JSON.parse(readFileSync(join(src, '..', 'package.json'), 'utf8'));
    // `default` lets a CommonJS file require() it too (Node.js >= 20.19 loads ES modules so).
    expect(pkg.exports['./sqlite']).toEqual({
      types: './dist/sqlite.d.ts',
      import: './dist/sqlite.js',
      default: './dist/sqlite.js',
    });
    // `npx waymark run` keeps runs in SQLite, so installing waymark installs the driver (see
    // docs/cli.md); it is still loaded only through waymark/sqlite (the test above).
    expect(pkg.dependencies['better-sqlite3']).toBe('^12.0.0');
    expect(pkg.peerDependencies['better-sqlite3']).toBeUndefined();
  });
});
