/**
 * The bug reports the example ships with. Each names the repro script its reporter attached,
 * relative to `fixtures/`, and the arguments to run it with.
 */
export interface BugReport {
  readonly id: string;
  readonly title: string;
  readonly text: string;
  readonly repro: { readonly script: string; readonly args: readonly string[] };
}

export const bugs = {
  'billing-rounding': {
    id: 'billing-rounding',
    title: 'Invoice total is one cent short',
    text: 'A customer bought one item at 0.29 and was invoiced 0.28. Finance noticed in the ledger.',
    repro: { script: 'billing/repro-rounding.mjs', args: [] },
  },
  'search-pagination': {
    id: 'search-pagination',
    title: 'Search results skip one item per page',
    text: 'Paging through results, the last item of every page never shows up.',
    repro: { script: 'search/repro-pagination.mjs', args: [] },
  },
  'export-missing-email': {
    id: 'export-missing-email',
    title: 'Nightly user export crashes',
    text: 'The CSV export of users has failed every night since the signup form change.',
    repro: { script: 'export/repro-export.mjs', args: [] },
  },
  'webhook-flaky': {
    id: 'webhook-flaky',
    title: 'Partner webhooks fail now and then',
    text: 'Deliveries to the partner fail with connection resets, then go through later.',
    // The partner drops the first two attempts.
    repro: { script: 'webhooks/repro-deliver.mjs', args: ['2'] },
  },
  'webhook-down': {
    id: 'webhook-down',
    title: 'Partner webhooks always fail',
    text: 'Every delivery to the partner fails with a connection reset.',
    repro: { script: 'webhooks/repro-deliver.mjs', args: [] },
  },
} as const satisfies Record<string, BugReport>;

export type BugId = keyof typeof bugs;

export const bugIds = Object.keys(bugs) as [BugId, ...BugId[]];
