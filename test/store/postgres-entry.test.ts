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

describe('the waymark/postgres entry', () => {
  it('is the only entry that loads pg: users of the memory or SQLite store need not install it', () => {
    for (const entry of ['index.ts', 'testing/index.ts', 'sqlite.ts', 'model/index.ts']) {
      expect(packagesReachedFrom(entry)).not.toContain('pg');
    }
    expect(packagesReachedFrom('postgres.ts')).toContain('pg');
    expect(packagesReachedFrom('postgres.ts')).not.toContain('better-sqlite3');
  });

  it('is exported by package.json, and pg is an optional peer dependency', () => {
    const pkg = JSON.parse(readFileSync(join(src, '..', 'package.json'), 'utf8'));
    expect(pkg.exports['./postgres']).toEqual({
      types: './dist/postgres.d.ts',
      import: './dist/postgres.js',
      default: './dist/postgres.js',
    });
    expect(pkg.peerDependencies.pg).toBe('^8.0.0');
    expect(pkg.peerDependenciesMeta.pg).toEqual({ optional: true });
  });
});
