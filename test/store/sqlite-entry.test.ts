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

  it('is exported by package.json, and better-sqlite3 is an optional peer dependency', () => {
    const pkg = JSON.parse(readFileSync(join(src, '..', 'package.json'), 'utf8'));
    expect(pkg.exports['./sqlite']).toEqual({
      types: './dist/sqlite.d.ts',
      import: './dist/sqlite.js',
    });
    expect(pkg.peerDependencies['better-sqlite3']).toBe('^12.0.0');
    expect(pkg.peerDependenciesMeta['better-sqlite3']).toEqual({ optional: true });
  });
});
