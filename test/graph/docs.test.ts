import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { diagnosticCodes } from '../../src/graph/diagnostic.js';
import {
  all,
  any,
  append,
  best,
  END,
  errorCodes,
  graph,
  person,
  quorum,
  union,
} from '../../src/index.js';
import { State } from './support.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const diagnosticsDoc = read('docs/diagnostics.md');
const errorsDoc = read('docs/errors.md');

/** The `## Heading` sections of a markdown text, by heading. */
function sections(markdown: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of markdown.split(/^## /m).slice(1)) {
    const newline = part.indexOf('\n');
    out.set(part.slice(0, newline).trim(), part.slice(newline + 1));
  }
  return out;
}

const codeBlocks = (text: string) =>
  [...text.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);

/** Runs a documentation example: one builder expression over `State`, `work`, `END`, `person`, `z`, ... */
function builderOf(example: string) {
  const expression = example.trim().replace(/;$/, '');
  const names = [
    'graph',
    'END',
    'State',
    'work',
    'append',
    'union',
    'all',
    'any',
    'quorum',
    'best',
    'person',
    'z',
  ];
  const make = new Function(...names, `return (${expression});`);
  const work = async () => ({});
  return make(
    graph,
    END,
    State,
    work,
    append,
    union,
    all,
    any,
    quorum,
    best,
    person,
    z,
  ) as ReturnType<typeof graph>;
}

// The docs state `State` as topic, notes and done; the examples run against the tests' State.
it('the State of the diagnostics examples is the one the examples run against', () => {
  expect(Object.keys(State.shape)).toEqual(['topic', 'notes', 'done']);
  expect(diagnosticsDoc).toContain('const State = z.object({\n  topic: z.string(),');
});

describe('docs/diagnostics.md', () => {
  const byCode = sections(diagnosticsDoc);

  it.each(diagnosticCodes)('has a section for %s', (code) => {
    expect(byCode.has(code)).toBe(true);
  });

  it('has no section for a code the validator does not have', () => {
    const codeLike = [...byCode.keys()].filter((h) => /^[A-Z_]+$/.test(h));
    expect(codeLike.filter((h) => !(diagnosticCodes as readonly string[]).includes(h))).toEqual([]);
  });

  it.each(diagnosticCodes)(
    'the first example under %s raises it and the second is the fix',
    (code) => {
      const [broken, fixed] = codeBlocks(byCode.get(code) ?? '');

      expect(broken, `docs/diagnostics.md ${code} has no example`).toBeDefined();
      expect(fixed, `docs/diagnostics.md ${code} has no fixed example`).toBeDefined();
      expect(
        builderOf(broken!)
          .validate()
          .map((d) => d.code),
      ).toContain(code);
      expect(builderOf(fixed!).validate()).toEqual([]);
    },
  );
});

describe('docs/errors.md', () => {
  const byHeading = sections(errorsDoc);
  const listed = (heading: string) =>
    [...(byHeading.get(heading) ?? '').matchAll(/^- `([^`]+)`/gm)].map((m) => m[1]!);

  it('lists every error code once, and no other', () => {
    expect(listed('Codes').sort()).toEqual([...errorCodes].sort());
  });

  it('lists every error class once, and no other', () => {
    const union = read('src/error/codes.ts').match(/export type ErrorClass =([^;]+);/)?.[1] ?? '';
    const classes = [...union.matchAll(/'([a-z]+)'/g)].map((m) => m[1]!);

    expect(classes.length).toBeGreaterThan(0);
    expect(listed('Error classes').sort()).toEqual(classes.sort());
  });
});
