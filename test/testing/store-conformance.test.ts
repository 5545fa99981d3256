import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/index.js';
import { storeConformance, type TestApi } from '../../src/testing/index.js';

/** A test framework that only records what the suite declares, so this test can run it by hand. */
function recorder() {
  type Hook = () => Promise<void>;
  const tests: { name: string; body: Hook; before: Hook[]; after: Hook[] }[] = [];
  // One frame per describe: the hooks declared in it, which apply to the tests inside it.
  const frames: { name: string; before: Hook[]; after: Hook[] }[] = [
    { name: '', before: [], after: [] },
  ];
  const api: TestApi = {
    describe: (name, body) => {
      frames.push({ name, before: [], after: [] });
      body();
      frames.pop();
    },
    it: (name, body) =>
      tests.push({
        name: [...frames.slice(1).map((f) => f.name), name].join(' > '),
        body,
        before: frames.flatMap((f) => f.before),
        after: frames.flatMap((f) => f.after).reverse(),
      }),
    beforeEach: (body) => frames.at(-1)!.before.push(body),
    afterEach: (body) => frames.at(-1)!.after.push(body),
    expect: expect as unknown as TestApi['expect'],
  };
  const runTest = async (match: string) => {
    const test = tests.find((t) => t.name.includes(match))!;
    for (const hook of test.before) await hook();
    try {
      await test.body();
    } finally {
      for (const hook of test.after) await hook();
    }
  };
  return { api, tests, runTest };
}

const fixture = async () => ({ store: new MemoryStore(), cleanup: async () => {} });

describe('the store conformance suite, as a third-party store runs it', () => {
  it('names a skipped test with its reason, and does not run it', async () => {
    const { api, tests, runTest } = recorder();
    storeConformance('Mine', fixture, api, {
      skip: [
        {
          test: 'renews many leases in one call, and reports those another owner took as lost',
          reason: 'this store has no leases yet',
        },
      ],
    });
    const skipped = tests.find((t) => t.name.includes('[skipped: this store has no leases yet]'));
    expect(skipped?.name).toContain('renews many leases in one call');
    await expect(runTest('[skipped:')).resolves.toBeUndefined();
    await expect(runTest('skips only tests the suite has')).resolves.toBeUndefined();
  });

  it('fails when a skip names a test the suite does not have, or gives no reason', async () => {
    const { api, runTest } = recorder();
    storeConformance('Mine', fixture, api, {
      skip: [
        { test: 'a test nobody wrote', reason: 'typo' },
        { test: 'a commit moves the run to its seq, status, error and time', reason: ' ' },
      ],
    });
    await expect(runTest('skips only tests the suite has')).rejects.toThrow();
  });

  it('holds every store of this package to the same tests', () => {
    const { api, tests } = recorder();
    storeConformance('MemoryStore', fixture, api);
    const groups = new Set(tests.map((t) => t.name.split(' > ')[1]));
    expect([...groups]).toEqual(
      expect.arrayContaining([
        'runs and their history',
        'ownership: one lease per run',
        'timers',
        'waits opened and closed by commits',
        'effects',
        'waits',
        'memos',
      ]),
    );
  });
});
