import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// docs/guarantees.md promises, per store and per fault, what a named test shows. Every test it
// names must exist under that name, and every line of its matrix must name a test or say
// that nothing tests it: a renamed or deleted test, or a claim with no test, fails here.

const root = new URL('../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');
const doc = read('docs/guarantees.md');

interface Reference {
  readonly file: string;
  readonly name: string;
}

/**
 * The tests the page names: `path` › "name", and further › "name"s after it name tests of the
 * same file. Line breaks inside a name are spaces.
 */
function references(markdown: string): Reference[] {
  const text = markdown.replace(/\s+/g, ' ');
  const out: Reference[] = [];
  let file: string | undefined;
  for (const m of text.matchAll(/`((?:test|src)\/[^`\s]+)`|› "([^"]+)"/g)) {
    if (m[1] !== undefined) file = m[1];
    else {
      expect(file, `a test name before any file: "${m[2]}"`).toBeDefined();
      out.push({ file: file!, name: m[2]! });
    }
  }
  return out;
}

/** Whether `source` declares a test (or a describe) named `name`, as written. */
function declares(source: string, name: string): boolean {
  for (const quote of ["'", '"', '`']) {
    const literal = `${quote}${name}${quote}`;
    for (let at = source.indexOf(literal); at !== -1; at = source.indexOf(literal, at + 1)) {
      // it('name', it(\n 'name', it.each([...])('name', describe('name'
      if (/(?:\bit|\btest|\bdescribe|\))\s*\(\s*$/.test(source.slice(Math.max(0, at - 200), at)))
        return true;
    }
  }
  return false;
}

/** The `- ` items of the page's sections after the first two, continuation lines joined. */
function matrixItems(markdown: string): string[] {
  const sections = markdown.split(/^## /m).slice(1);
  return sections
    .filter((s) => !s.startsWith('Stores, settings and hosts'))
    .flatMap((s) => s.split(/^- /m).slice(1))
    .map((item) =>
      item
        .split(/\n(?! {2})/)[0]!
        .replace(/\s+/g, ' ')
        .trim(),
    );
}

describe('docs/guarantees.md', () => {
  const refs = references(doc);

  it('names tests, each by its file and its name', () => {
    expect(refs.length).toBeGreaterThan(50);
  });

  it('names only test files that exist', () => {
    const missing = [...new Set(refs.map((r) => r.file))].filter(
      (file) => !existsSync(new URL(file, root)),
    );
    expect(missing).toEqual([]);
  });

  it('names only tests that exist, under the names they have', () => {
    const missing = refs
      .filter((r) => existsSync(new URL(r.file, root)))
      .filter((r) => !declares(read(r.file), r.name))
      .map((r) => `${r.file} › "${r.name}"`);
    expect(missing).toEqual([]);
  });

  it('every line of the matrix names a test or says it is not tested', () => {
    const items = matrixItems(doc);
    expect(items.length).toBeGreaterThan(30);
    const bare = items.filter((item) => !item.includes('› "') && !/not tested/i.test(item));
    expect(bare).toEqual([]);
  });

  it('is linked from the README and from docs/durability.md', () => {
    expect(read('README.md')).toContain('(docs/guarantees.md)');
    expect(read('docs/durability.md')).toContain('(guarantees.md)');
  });
});
