import type { BugReport } from './bugs.js';

/** What triage concludes from a report: where the bug lives and which files to look at. */
export interface Triage {
  readonly component: string;
  /** Paths relative to `fixtures/`. */
  readonly suspects: readonly string[];
  readonly summary: string;
}

/** A whole-file change, path relative to `fixtures/`. */
export interface FileChange {
  readonly path: string;
  readonly content: string;
}

/** What the fixer and the test writer are given: the report, the failure, the suspect files. */
export interface FixInput {
  readonly report: BugReport;
  readonly triage: Triage;
  /** The repro's stderr: the failure as the process reported it. */
  readonly failure: string;
  /** The suspect files' current content, by path. */
  readonly sources: Readonly<Record<string, string>>;
}

/**
 * The steps a model takes in this graph. The graph calls only these; `scripted` below answers
 * deterministically, and a model-backed implementation can replace it without a change to the
 * graph's code.
 */
export interface Steps {
  triage(report: BugReport): Triage | Promise<Triage>;
  fixCode(input: FixInput): readonly FileChange[] | Promise<readonly FileChange[]>;
  updateTests(input: FixInput): readonly FileChange[] | Promise<readonly FileChange[]>;
}

const triages: Readonly<Record<string, Triage>> = {
  'billing-rounding': {
    component: 'billing',
    suspects: ['billing/invoice.mjs'],
    summary: 'totals are summed as floats and truncated to cents',
  },
  'search-pagination': {
    component: 'search',
    suspects: ['search/paginate.mjs'],
    summary: 'the page slice ends one item early',
  },
  'export-missing-email': {
    component: 'export',
    suspects: ['export/export.mjs', 'export/users.json'],
    summary: 'some user records have no email',
  },
  'webhook-flaky': {
    component: 'webhooks',
    suspects: [],
    summary: 'the partner endpoint resets connections',
  },
  'webhook-down': {
    component: 'webhooks',
    suspects: [],
    summary: 'the partner endpoint resets connections',
  },
};

/** Edits as a model would make them: a search and a replacement in one suspect file. */
const fixes: Readonly<Record<string, { path: string; find: string; replace: string }>> = {
  'billing-rounding': {
    path: 'billing/invoice.mjs',
    find: [
      '  let sum = 0;',
      '  for (const line of lines) sum += line.quantity * line.unitPrice;',
      '  return Math.floor(sum * 100) / 100;',
    ].join('\n'),
    replace: [
      '  // Whole cents, so no float error accumulates and nothing is truncated.',
      '  let cents = 0;',
      '  for (const line of lines) cents += line.quantity * Math.round(line.unitPrice * 100);',
      '  return cents / 100;',
    ].join('\n'),
  },
  'search-pagination': {
    path: 'search/paginate.mjs',
    find: 'items.slice(start, start + size - 1)',
    replace: 'items.slice(start, start + size)',
  },
};

const regressionTests: Readonly<Record<string, FileChange>> = {
  'billing-rounding': {
    path: 'billing/invoice.regression.mjs',
    content: [
      "import assert from 'node:assert/strict';",
      "import { total } from './invoice.mjs';",
      '',
      'assert.equal(total([{ quantity: 1, unitPrice: 0.29 }]), 0.29);',
      'assert.equal(total([{ quantity: 3, unitPrice: 19.99 }, { quantity: 1, unitPrice: 0.01 }]), 59.98);',
      "console.log('invoice regression: ok');",
      '',
    ].join('\n'),
  },
  'search-pagination': {
    path: 'search/paginate.regression.mjs',
    content: [
      "import assert from 'node:assert/strict';",
      "import { page } from './paginate.mjs';",
      '',
      'const items = Array.from({ length: 7 }, (_, i) => i + 1);',
      'assert.deepEqual(page(items, 1, 3), [1, 2, 3]);',
      'assert.deepEqual(page(items, 3, 3), [7]);',
      "console.log('paginate regression: ok');",
      '',
    ].join('\n'),
  },
};

/**
 * Deterministic stand-ins for the model steps, keyed by the bundled reports. The fixer edits the
 * file it was given, so a wrong `sources` (a file changed under it) shows up as a failed edit.
 */
export const scripted: Steps = {
  triage: (report) => {
    const triage = triages[report.id];
    if (triage === undefined) throw new Error(`no scripted triage for "${report.id}"`);
    return triage;
  },
  fixCode: ({ report, sources }) => {
    const fix = fixes[report.id];
    if (fix === undefined) return [];
    const source = sources[fix.path];
    if (source === undefined || !source.includes(fix.find))
      throw new Error(`the scripted fix for "${report.id}" no longer applies to ${fix.path}`);
    return [{ path: fix.path, content: source.replace(fix.find, fix.replace) }];
  },
  updateTests: ({ report }) => {
    const test = regressionTests[report.id];
    return test === undefined ? [] : [test];
  },
};
