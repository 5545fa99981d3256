import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { END, graph, type StreamEvent, watch } from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';
import { buildSrc, random, root, sleep, startChild } from './harness.js';

// A watcher in another process than the run's: the runner is SIGKILLed mid-stream and another
// process resumes the run, while the watcher keeps dropping its connection and coming back
// with the last offset it saw. What it read, end to end, is the whole stream: nothing lost,
// nothing twice. Seeded: WAYMARK_STREAM_SEED replays a schedule.

const seed = Number(process.env.WAYMARK_STREAM_SEED ?? 20261201);
const steps = 30;
// The graph as the child declares it: the watcher reads the history with the same one.
const loop = graph('stream-crash', { state: z.object({ n: z.number().default(0) }) })
  .node('tick', async (s) => ({ n: s.n + 1 }), { visits: steps })
  .route('tick', (s) => (s.n < steps ? 'tick' : END), ['tick', END])
  .entry('tick')
  .compile();

describe('a stream watched from another process, through a SIGKILL and a resume', () => {
  it('reconnecting with the last offset it saw, the watcher reads every event once, in order', async () => {
    const { work, build } = buildSrc('stream');
    const db = join(work, 'runs.db');
    const next = random(seed);
    const script = join(root, 'test/crash/stream-child.mjs');
    const runner = startChild(script, [build, db, 'run']);
    await runner.ready;
    const store = new SqliteStore({ path: db });
    try {
      const seen: StreamEvent[] = [];
      let killed = false;
      let reconnects = 0;
      let resumer: ReturnType<typeof startChild> | undefined;
      for (;;) {
        // One connection: read until a random number of events has come, then drop it.
        const stop = new AbortController();
        const quota = 1 + Math.floor(next() * 12);
        let got = 0;
        const last = seen.at(-1)?.offset;
        try {
          for await (const event of watch(store, loop, 'r1', {
            pollMs: 5,
            signal: stop.signal,
            ...(last !== undefined && { after: last }),
          })) {
            seen.push(event);
            if (!killed && event.type === 'custom' && (event.data as { n: number }).n >= 10) {
              runner.proc.kill('SIGKILL');
              killed = true;
              await runner.exit;
              resumer = startChild(script, [build, db, 'resume']);
            }
            if (++got >= quota) break;
          }
        } catch (error) {
          // The run's file is written by the runner: a read can meet it mid-creation.
          if (!(error instanceof Error) || !/RUN_NOT_FOUND/.test(String(error))) throw error;
          await sleep(5);
        }
        const end = seen.at(-1);
        if (end?.type === 'run' && end.status === 'succeeded') break;
        reconnects++;
      }
      expect(killed).toBe(true);
      expect((await resumer!.exit).code).toBe(0);
      const whole: StreamEvent[] = [];
      for await (const event of watch(store, loop, 'r1', { follow: false })) whole.push(event);
      expect(seen).toEqual(whole);
      const ticks = whole
        .filter((e) => e.type === 'custom')
        .map((e) => (e.data as { n: number }).n);
      // The tick that was running when the runner died emitted, but its attempt was never
      // recorded: the stream has each recorded attempt's events once.
      expect(ticks).toEqual(Array.from({ length: steps }, (_, i) => i));
      process.stdout.write(
        `stream crash: seed ${seed}, ${whole.length} events, ${reconnects} reconnects, SIGKILL at tick 10\n`,
      );
    } finally {
      await store.close();
      rmSync(work, { recursive: true, force: true });
    }
  }, 60_000);
});
