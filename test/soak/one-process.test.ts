import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';

// Many runs through one process, on one SQLite file: after the first quarter (warm-up), the heap
// does not grow with the runs, no file descriptor is left open, and the file grows linearly.
// 2,000 runs by default (seconds); WAYMARK_SOAK_RUNS=100000 for the long soak (about 7 min
// here). The runs go on in a child process started with --expose-gc, so the heap is measured
// after a full collection, not as the garbage happens to lie.

const runs = Number(process.env.WAYMARK_SOAK_RUNS ?? 2_000);
const dir = mkdtempSync(join(tmpdir(), 'waymark-soak-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Sample {
  readonly done: number;
  readonly heap: number;
  readonly fds: number;
  readonly bytes: number;
}

function soak(): Promise<Sample[]> {
  const child = spawn(
    process.execPath,
    [
      '--expose-gc',
      '--import',
      'tsx',
      'test/soak/one-process-child.ts',
      join(dir, 'soak.db'),
      String(runs),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    err += c.toString();
  });
  return new Promise((resolve, reject) =>
    child.on('exit', (code) =>
      code === 0
        ? resolve(
            out
              .trim()
              .split('\n')
              .map((l) => JSON.parse(l) as Sample),
          )
        : reject(new Error(`the soak exited ${code}: ${err}`)),
    ),
  );
}

it(`${runs} runs in one process: heap and descriptors flat after warm-up, the file linear`, async () => {
  const samples = await soak();
  expect(samples.map((s) => s.done)).toEqual([0, runs / 4, runs / 2, (3 * runs) / 4, runs]);
  const [, warm, half, , end] = samples as [Sample, Sample, Sample, Sample, Sample];
  const mb = (n: number) => Math.round(n / 1e4) / 100;
  const report = samples.map(
    (s) => `${s.done}: heap ${mb(s.heap)} MB, ${s.fds} fds, ${mb(s.bytes)} MB`,
  );

  // Flat: what stays on the heap after the warm-up is under 256 bytes a run (a leak of one small
  // object per run would pass it; a run's state, trace or closure kept would not) and 2 MB.
  expect(end.heap - warm.heap, report.join('\n')).toBeLessThan(2e6 + 256 * (end.done - warm.done));
  expect(end.fds, report.join('\n')).toBeLessThanOrEqual(warm.fds);
  // Linear: after the warm-up, each half of the rest takes about the same room (a checkpoint
  // lands the WAL in the file every thousand pages or so, which moves it by a few pages).
  const [, , , third] = samples as Sample[];
  const earlier = half.bytes - warm.bytes;
  const later = end.bytes - third!.bytes;
  expect(later / earlier, report.join('\n')).toBeGreaterThan(0.6);
  expect(later / earlier, report.join('\n')).toBeLessThan(1.6);
}, 600_000);
