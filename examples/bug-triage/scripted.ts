import { type ScriptedModel, type ScriptedRequest, scriptedModel } from '../../src/model/index.js';
import {
  type Changes,
  type FileChange,
  type FixInput,
  fixSystem,
  inputOf,
  type Triage,
  type TriageInput,
  testsSystem,
  triageSystem,
} from './prompts.js';

/**
 * The scripted model bug-triage runs with when no `--model` is given: the answers a model
 * would give for the bundled reports, keyed by the report id in the prompt's input block. The
 * fixer edits the file it was given in the prompt, so a wrong source (a file changed under it)
 * shows up as a failed edit.
 */

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
 * The scripted answer to one request, by its system prompt (which step asks) and its user
 * prompt (the input block). The scripted model answers with it, and so does the fake
 * OpenAI-compatible server of the tests.
 *
 * @example
 * answer(triageSystem, prompt('Triage this report.', { report, files })) // { component: 'search', ... }
 */
export function answer(system: string, user: string): Triage | Changes {
  if (system === triageSystem) {
    const { report } = inputOf<TriageInput>(user);
    const triage = triages[report.id];
    if (triage === undefined) throw new Error(`no scripted triage for "${report.id}"`);
    return triage;
  }
  if (system === fixSystem) {
    const { report, sources } = inputOf<FixInput>(user);
    const fix = fixes[report.id];
    if (fix === undefined) return { files: [] };
    const source = sources[fix.path];
    if (source === undefined || !source.includes(fix.find))
      throw new Error(`the scripted fix for "${report.id}" no longer applies to ${fix.path}`);
    return { files: [{ path: fix.path, content: source.replace(fix.find, fix.replace) }] };
  }
  if (system === testsSystem) {
    const { report } = inputOf<FixInput>(user);
    const test = regressionTests[report.id];
    return { files: test === undefined ? [] : [test] };
  }
  throw new Error('the scripted model has no answer for this system prompt');
}

/** The system prompt and the first user message of a request, as text. */
export function messagesOf(request: ScriptedRequest): { system: string; user: string } {
  let system = '';
  let user: string | undefined;
  for (const message of request.options.prompt) {
    const text =
      typeof message.content === 'string'
        ? message.content
        : message.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
    if (message.role === 'system') system = text;
    else if (message.role === 'user') user ??= text;
  }
  return { system, user: user ?? '' };
}

/**
 * A new scripted model for the graph's three model nodes, named `scripted:bug-triage`.
 *
 * @example
 * const result = await run(bugTriage({ model: scripted() }), { bug: 'search-pagination' });
 */
export function scripted(): ScriptedModel {
  return scriptedModel(
    (request) => {
      const { system, user } = messagesOf(request);
      return { object: answer(system, user) };
    },
    { modelId: 'bug-triage' },
  );
}
