// A run named by the start of its id (as a narrow table or the web page cuts it): one run whose
// id starts with it is that run; several are named and none is chosen; a start shorter than 4
// characters, or an id that is a whole run's, is taken as it is.
import { describe, expect, it } from 'vitest';
import {
  expectError,
  expectExit,
  expectJsonError,
  jsonOf,
  reviewWaiting,
  sandbox,
  testTimeoutMs,
} from './support.js';

describe.concurrent('a run id given by its start', { timeout: testTimeoutMs }, () => {
  it('names the one run whose id starts with it, for reading and for answering', async () => {
    const box = sandbox();
    await reviewWaiting(box, 'e3a4b7b3-0001');
    await reviewWaiting(box, 'f0000000-0002');

    const show = await box.waymark(['--json', 'show', 'e3a4b7']);
    expectExit(show, 0);
    expect(jsonOf(show, 'run')).toMatchObject({ runId: 'e3a4b7b3-0001', status: 'waiting' });

    const approve = await box.waymark(['approve', 'e3a4']);
    expectExit(approve, 3); // on to the fixture's next wait
    expect(approve.lines[0]).toBe(
      'recorded the answer to review (request e3a4b7b3-0001/review:1) by cli',
    );
    // The hint after it names the whole id, for the next command.
    expect(approve.lines.at(-1)).toContain('waymark answer e3a4b7b3-0001 ');
  });

  it('refuses a start that several runs share, naming them, and changes neither', async () => {
    const box = sandbox();
    await reviewWaiting(box, 'abcd1111');
    await reviewWaiting(box, 'abcd2222');

    const out = await box.waymark(['approve', 'abcd']);
    expectError(out, 'RUN_NOT_FOUND');
    expect(out.errLines).toEqual([
      `error RUN_NOT_FOUND: there is no run "abcd", and 2 runs' ids start with it: ${['abcd2222', 'abcd1111'].join(', ')}`,
      'hint: name the run by more of its id, or all of it',
    ]);
    const json = await box.waymark(['--json', 'show', 'abcd']);
    expect(expectJsonError(json, 'RUN_NOT_FOUND').details).toEqual({
      reason: 'ambiguous',
      candidates: ['abcd2222', 'abcd1111'],
    });
    for (const runId of ['abcd1111', 'abcd2222']) {
      const show = await box.waymark(['--json', 'show', runId]);
      expect(jsonOf(show, 'run')).toMatchObject({ status: 'waiting' });
    }
  });

  it('takes a start of 3 characters, and a whole id, as they are', async () => {
    const box = sandbox();
    await reviewWaiting(box, 'abc');
    await reviewWaiting(box, 'abcdef01');

    const short = await box.waymark(['show', 'abc']);
    expectExit(short, 0);
    expect(short.lines[0]).toBe('run      abc');
    const none = await box.waymark(['show', 'zzz']);
    expectError(none, 'RUN_NOT_FOUND');
    expect(none.errLines[0]).toContain('there is no run "zzz"');
  });
});
