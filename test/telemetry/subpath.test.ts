import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

// STYLE.md 7: drivers load only from their own subpath. @opentelemetry/api is an optional peer:
// a user of `waymark` who never imports `waymark/otel` must not need it installed.

const src = new URL('../../src/', import.meta.url).pathname;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('the OpenTelemetry API', () => {
  it('is imported only by waymark/otel (src/otel.ts and src/telemetry/), never by the runtime', () => {
    const importers = sourceFiles(src)
      .filter((file) => /from '@opentelemetry\//.test(readFileSync(file, 'utf8')))
      .map((file) => relative(src, file));

    expect(importers.length).toBeGreaterThan(0);
    expect(importers.filter((f) => !f.startsWith('telemetry/') && f !== 'otel.ts')).toEqual([]);
  });

  it('reaches the runtime only as types: src/telemetry imports no runtime value', () => {
    const values = sourceFiles(join(src, 'telemetry')).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/^import \{[^}]*\} from '\.\.\/runtime\/[^']+';/gm)]
        .map((m) => m[0])
        .filter((line) => !line.startsWith('import type')),
    );

    expect(values).toEqual([]);
  });

  it('is exported as waymark/otel', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));

    expect(pkg.exports['./otel']).toEqual({
      types: './dist/otel.d.ts',
      import: './dist/otel.js',
      default: './dist/otel.js',
    });
    expect(pkg.peerDependenciesMeta['@opentelemetry/api']).toEqual({ optional: true });
  });
});
