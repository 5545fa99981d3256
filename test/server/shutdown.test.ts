import { expect, it } from 'vitest';
import { serve } from '../../src/server.js';
import { SqliteStore } from '../../src/sqlite.js';
import { expectExit, fixture, jsonOf, sandbox, testTimeoutMs } from '../cli/support.js';

// A server that stops (SIGTERM, close()) gives the runs it drives back instead of cancelling
// them or waiting for them forever: each is left resumable, with its lease let go, and another
// process finishes it without running a completed node again.

process.env.FIXTURE_STEP_MS ??= '300';
const { default: slow } = await import('../cli/fixtures/slow.js');

it(
  'a server that stops leaves its runs resumable, and another process finishes them, running no completed node again',
  async () => {
    const box = sandbox();
    const store = new SqliteStore({ path: box.db });
    const served = await serve({ store, graphs: [slow], token: 't', drainGraceMs: 50 });
    const started = await fetch(`${served.url}/runs`, {
      method: 'POST',
      headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
      body: JSON.stringify({ graph: 'slow', input: {}, runId: 's-1' }),
    });
    expect(started.status).toBe(202);
    // Stopped while its second node runs, the first one checkpointed.
    while (!(await store.events('s-1')).some((e) => e.event.includes('"one:1"'))) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await served.close();
    expect(await store.getRun('s-1')).toMatchObject({ status: 'running', lease: { live: false } });
    await store.close();

    const resumed = await box.waymark(['--json', 'resume', 's-1', '--graph', fixture('slow.ts')], {
      env: { FIXTURE_STEP_MS: '10' },
    });
    expectExit(resumed, 0);
    expect(jsonOf(resumed, 'resuming')).toMatchObject({ readBack: ['one:1'], toRun: ['two:1'] });
    expect(jsonOf(resumed, 'result')).toMatchObject({ status: 'succeeded', steps: 3 });
  },
  testTimeoutMs,
);
