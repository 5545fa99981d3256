// What ctx.heartbeat() costs in process: a one-node run whose node heartbeats `beats` times,
// against the same run whose node does not, alternating in one process; the difference per
// heartbeat. Also with idleTimeoutMs set (its timer re-arms only when it fires, not per beat).
// Run alone: node --import tsx bench/heartbeat.ts, or through bench/run.ts for the tsc build.

import type { z } from 'zod';
import { type Contender, check, compare, progress, settingsFromEnv } from './lib/measure.js';
import { emit } from './lib/report.js';
import { waymarkOrigin, wm } from './lib/waymark.js';

const beats = 10_000;
const { z: zod } = (await import('zod')) as { z: typeof z };
const State = zod.object({ n: zod.number().default(0) });

function node(beating: boolean, idleTimeoutMs?: number) {
  return wm
    .graph('beats', { state: State })
    .node(
      'work',
      (_s, ctx) => {
        let n = 0;
        for (let i = 0; i < beats; i++) {
          n += i & 1;
          if (beating) ctx.heartbeat();
        }
        return { n };
      },
      idleTimeoutMs === undefined ? {} : { idleTimeoutMs },
    )
    .edge('work', wm.END)
    .entry('work')
    .compile();
}

function contender(name: string, g: ReturnType<typeof node>): Contender {
  return {
    name,
    units: beats,
    call: async () => {
      const r = await wm.run(g, {});
      check(r.status === 'succeeded' && r.state.n === beats / 2, `${name}: ended ${r.status}`);
      return undefined;
    },
  };
}

const settings = settingsFromEnv();
progress(`heartbeat: warm-up ${settings.warmupMs} ms, ${settings.reps} repetitions`);
const [plain, beating, idle] = await compare(
  [
    contender('no heartbeat', node(false)),
    contender('ctx.heartbeat()', node(true)),
    contender('ctx.heartbeat(), idleTimeoutMs set', node(true, 60_000)),
  ],
  { settings, minWarmUnits: 100_000, scale: 1000 },
);
// Paired by repetition: each repetition's per-heartbeat time minus the plain loop's in the same one.
const over = (r: typeof plain) => {
  const diffs = r!.values.map((v, i) => v - plain!.values[i]!).sort((a, b) => a - b);
  const mid = Math.floor(diffs.length / 2);
  const median = diffs.length % 2 === 1 ? diffs[mid]! : (diffs[mid - 1]! + diffs[mid]!) / 2;
  return { median, min: diffs[0]!, max: diffs.at(-1)!, reps: diffs.length };
};
emit({
  scenario: 'heartbeat',
  title: `ctx.heartbeat() in process, per heartbeat (${beats} per attempt)`,
  waymarkOrigin,
  rows: [
    {
      measure: 'a heartbeat, over the loop without',
      unit: 'us',
      waymark: over(beating),
      target: '< 1 us',
      met: over(beating).median < 1,
    },
    {
      measure: 'the same with idleTimeoutMs set',
      unit: 'us',
      waymark: over(idle),
      target: '< 1 us',
      met: over(idle).median < 1,
    },
  ],
  details: { settings, plain, beating, idle },
});
