import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  append,
  max,
  mergeByKey,
  min,
  type Reducer,
  replace,
  sum,
  union,
} from '../../src/index.js';
import { checkReducer, type ReducerReport } from '../../src/testing/index.js';

// A fixed seed: a law that holds is checked on the same cases every run, so no run is flaky.
const seed = 20261130;
type Laws = { commutative: boolean; associative: boolean; idempotent: boolean };

// Few distinct values, so that duplicates and key clashes are common in the generated arrays.
const unionItem = fc.oneof(
  fc.integer({ min: -3, max: 3 }),
  fc.double(), // includes NaN, -0 and the infinities
  fc.string({ maxLength: 2 }),
);
const finding = fc.record(
  { id: fc.constantFrom('a', 'b', 'c', 1, 2), score: fc.integer({ min: 0, max: 3 }) },
  { noNullPrototype: true },
);

/**
 * Every built-in reducer on the values its JSDoc in src/graph/reducers.ts speaks of, and the laws
 * that JSDoc claims. `values` is the text of the table in docs/reducers.md.
 */
const builtIns: {
  reducer: Reducer;
  values: string;
  arbitrary: fc.Arbitrary<unknown>;
  laws: Laws;
}[] = [
  {
    reducer: replace,
    values: 'any JSON value',
    arbitrary: fc.jsonValue(),
    laws: { commutative: false, associative: true, idempotent: true },
  },
  {
    reducer: append,
    values: 'arrays of JSON values',
    arbitrary: fc.array(fc.jsonValue()),
    laws: { commutative: false, associative: true, idempotent: false },
  },
  {
    reducer: union,
    values: 'arrays of strings and numbers',
    arbitrary: fc.array(unionItem),
    laws: { commutative: true, associative: true, idempotent: false },
  },
  {
    reducer: union,
    values: 'arrays `union` returned (sorted, no duplicates)',
    // Normalised by union itself: idempotence is claimed for exactly the values it produces.
    arbitrary: fc.array(unionItem).map((items) => union.apply([], items)),
    laws: { commutative: true, associative: true, idempotent: true },
  },
  {
    reducer: max,
    values: 'numbers, NaN and -0 included',
    arbitrary: fc.double(),
    laws: { commutative: true, associative: true, idempotent: true },
  },
  {
    reducer: min,
    values: 'numbers, NaN and -0 included',
    arbitrary: fc.double(),
    laws: { commutative: true, associative: true, idempotent: true },
  },
  {
    reducer: sum,
    values: '32-bit integers',
    arbitrary: fc.integer(),
    laws: { commutative: true, associative: true, idempotent: false },
  },
  {
    reducer: sum,
    values: 'amounts with cents, such as 0.1',
    arbitrary: fc.integer({ min: -100_000, max: 100_000 }).map((cents) => cents / 100),
    laws: { commutative: true, associative: false, idempotent: false },
  },
  {
    reducer: mergeByKey('id'),
    values: 'arrays of records with an `id`',
    arbitrary: fc.array(finding),
    laws: { commutative: false, associative: true, idempotent: false },
  },
  {
    reducer: mergeByKey('id'),
    values: 'arrays of records with unique `id`s',
    arbitrary: fc.uniqueArray(finding, { selector: (item) => item.id }),
    laws: { commutative: false, associative: true, idempotent: true },
  },
];

const reports = builtIns.map((c) => ({
  ...c,
  report: checkReducer(c.reducer, c.arbitrary, { seed }),
}));
const lawNames = ['commutative', 'associative', 'idempotent'] as const;
const holds = (report: ReducerReport<unknown>): Laws => ({
  commutative: report.commutative.holds,
  associative: report.associative.holds,
  idempotent: report.idempotent.holds,
});

describe('the built-in reducers', () => {
  it.each(reports)('$reducer.name on $values satisfies exactly its documented laws', (c) => {
    expect(c.report.reducer).toBe(c.reducer.name);
    expect(holds(c.report)).toEqual(c.laws);
  });

  it.each(reports)(
    '$reducer.name on $values comes with a counterexample for each law it breaks',
    (c) => {
      for (const law of lawNames) {
        const result = c.report[law];
        if (result.holds) continue;
        const { inputs, left, right } = result.counterexample;
        const f = (a: unknown, b: unknown) => c.reducer.apply(a, b);
        const [a, b, z] = inputs;
        const sides = {
          commutative: () => [f(a, b), f(b, a)],
          associative: () => [f(f(a, b), z), f(a, f(b, z))],
          idempotent: () => [f(a, a), a],
        }[law]();
        expect([left, right]).toEqual(sides);
        expect(left).not.toStrictEqual(right);
      }
    },
  );

  it('union puts numbers before strings, whatever order they arrive in', () => {
    expect(union.apply(['b', 2], ['a', Number.NaN, 1, -0])).toEqual([
      0,
      1,
      2,
      Number.NaN,
      'a',
      'b',
    ]);
    expect(union.apply(['a', Number.NaN, 1, -0], ['b', 2])).toEqual([
      0,
      1,
      2,
      Number.NaN,
      'a',
      'b',
    ]);
  });
});

describe('checkReducer on a reducer of your own', () => {
  const subtract: Reducer<number> = { name: 'subtract', apply: (a, b) => a - b };

  it('returns, as plain data, the inputs on which a law fails and the two sides that differ', () => {
    const report = checkReducer(subtract, fc.integer({ min: -100, max: 100 }), { seed });
    expect(report.reducer).toBe('subtract');
    expect(report.commutative.holds).toBe(false);
    expect(report.associative.holds).toBe(false);
    if (report.idempotent.holds) throw new Error('a - a is 0, not a');
    const [a] = report.idempotent.counterexample.inputs;
    expect(report.idempotent.counterexample).toEqual({ inputs: [a], left: 0, right: a });
    expect(JSON.parse(JSON.stringify(report))).toEqual(report);
  });

  it('gives the same report for the same seed', () => {
    const arbitrary = fc.integer();
    expect(checkReducer(subtract, arbitrary, { seed: 7 })).toEqual(
      checkReducer(subtract, arbitrary, { seed: 7 }),
    );
  });

  it('reports a reducer that mutates its arguments as an error naming it and the inputs', () => {
    const push: Reducer<number[]> = {
      name: 'push',
      apply: (current, update) => {
        current.push(...update);
        return current;
      },
    };
    expect(() => checkReducer(push, fc.array(fc.integer()), { seed })).toThrow(
      /^reducer "push" mutated its arguments .*inputs may be frozen.* on inputs \[/,
    );
  });

  it('reports a reducer that throws for another reason as an error, not as a broken law', () => {
    const strict: Reducer<number> = {
      name: 'strict',
      apply: (a, b) => {
        if (b < 0) throw new RangeError('negative update');
        return a + b;
      },
    };
    expect(() => checkReducer(strict, fc.integer(), { seed })).toThrow(
      /^reducer "strict" threw on inputs .*RangeError: negative update/,
    );
  });
});

describe('docs/reducers.md', () => {
  const doc = readFileSync(new URL('../../docs/reducers.md', import.meta.url), 'utf8');
  const yesNo = (law: boolean) => (law ? 'yes' : 'no');

  it('has a table of laws that agrees with what checkReducer finds', () => {
    const table = /^\| Reducer .*\n\|[-| ]+\|\n((?:\|.*\|\n)+)/m.exec(doc)?.[1];
    expect(table).toBeDefined();
    const rows = table!
      .trimEnd()
      .split('\n')
      .map((row) =>
        row
          .split('|')
          .slice(1, -1)
          .map((cell) => cell.trim()),
      );
    expect(rows).toEqual(
      reports.map(({ reducer, values, report }) => [
        // The recorded name `mergeByKey(id)` is shown as the call that makes it.
        `\`${reducer.name.replace(/^mergeByKey\((\w+)\)$/, "mergeByKey('$1')")}\``,
        values,
        ...lawNames.map((law) => yesNo(report[law].holds)),
      ]),
    );
  });

  it('shows the report its checkReducer example really returns', async () => {
    const code = /```ts\n(import fc[\s\S]*?)```/.exec(doc)?.[1];
    expect(code).toBeDefined();
    // The commented report below the call becomes an `expected` export of the example module.
    const [body, comment] = code!.split('// {\n');
    const expected = `{\n${comment!.replace(/^\/\/ ?/gm, '')}`;
    const src = new URL('../../src/', import.meta.url).pathname;
    const dir = new URL('../.tmp/', import.meta.url);
    mkdirSync(dir, { recursive: true });
    const file = new URL('reducers-doc-example.ts', dir);
    const module = body!
      .replace("from 'waymark/testing'", `from '${src}testing/index.js'`)
      .replace("from 'waymark'", `from '${src}index.js'`);
    writeFileSync(file, `${module}export { report };\nexport const expected = ${expected};\n`);
    const example = await import(file.href);
    expect(example.report).toEqual(example.expected);
  });
});

it('only src/testing imports fast-check, so users of plain graphs need not install it', () => {
  const src = new URL('../../src/', import.meta.url);
  const importers = readdirSync(src, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.startsWith('testing/'))
    .filter((file) => /from 'fast-check'/.test(readFileSync(new URL(file, src), 'utf8')));
  expect(importers).toEqual([]);
});
