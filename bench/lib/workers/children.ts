// Worker processes of the worker benchmarks: real child processes, started and registered before
// any timing, their stdout read line by line, stopped (or killed) by their own pid.

import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { PostgresStore } from '../../../src/postgres.js';
import { buildWaymark } from '../build-waymark.js';
import { pgUrl, sleep } from '../pg.js';

const here = dirname(fileURLToPath(import.meta.url));

/** One worker process. */
export interface Child {
  readonly pid: number;
  readonly proc: ChildProcess;
  /** Calls `listener` with every line the child writes to stdout from now on. */
  onLine(listener: (line: string) => void): void;
  readonly exited: Promise<void>;
  /** What it wrote to stderr so far. */
  stderr(): string;
}

const live = new Set<ChildProcess>();
// A bench that crashes leaves no worker behind.
process.on('exit', () => {
  for (const proc of live) proc.kill('SIGKILL');
});

/** Node's own flags for every child, from BENCH_CHILD_NODE_ARGS (`--cpu-prof --cpu-prof-dir=p`). */
const nodeArgs = process.env.BENCH_CHILD_NODE_ARGS?.split(' ').filter(Boolean) ?? [];

function start(args: readonly string[], env: NodeJS.ProcessEnv = process.env): Child {
  const proc = spawn(process.execPath, [...nodeArgs, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  live.add(proc);
  const listeners: ((line: string) => void)[] = [];
  createInterface({ input: proc.stdout! }).on('line', (line) => {
    for (const listener of listeners) listener(line);
  });
  let stderr = '';
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
    if (process.env.BENCH_VERBOSE) process.stderr.write(d);
  });
  const exited = new Promise<void>((resolve) =>
    proc.on('close', () => {
      live.delete(proc);
      resolve();
    }),
  );
  return {
    pid: proc.pid!,
    proc,
    onLine: (listener) => listeners.push(listener),
    exited,
    stderr: () => stderr,
  };
}

/** The directory of the plain-JavaScript build the worker processes load. */
export function workerBuild(): string {
  const entry = process.env.BENCH_WAYMARK_BUILD ?? buildWaymark(undefined, 'workers').entry;
  return dirname(entry);
}

/** Options a waymark worker process is started with (absent: the `Worker` defaults). */
export interface WaymarkWorkerOptions {
  readonly concurrency?: number;
  readonly leaseMs?: number;
  readonly pollMs?: number;
  readonly folds?: number;
  /** false: every activation through the task queue (`WorkerOptions.inline`). */
  readonly inline?: boolean;
  readonly notify?: boolean;
}

/**
 * Starts `count` waymark worker processes on `schema` and resolves once every one of them is
 * registered in the store (its row in `workers`): from then on it claims work.
 */
export async function startWaymarkWorkers(
  store: PostgresStore,
  build: string,
  count: number,
  options: WaymarkWorkerOptions = {},
): Promise<Child[]> {
  const script = `${here}/waymark-worker.mjs`;
  const children = Array.from({ length: count }, () =>
    start([script, build, pgUrl, store.schema, JSON.stringify(options)]),
  );
  const until = Date.now() + 30_000;
  for (;;) {
    const registered = new Set((await store.listWorkers()).map((w) => w.pid));
    if (children.every((c) => registered.has(c.pid))) return children;
    const dead = children.find((c) => c.proc.exitCode !== null);
    if (dead !== undefined || Date.now() > until) {
      throw new Error(`bench: a waymark worker did not start:\n${dead?.stderr() ?? ''}`);
    }
    await sleep(20);
  }
}

/** Starts `count` pg-boss worker processes on `queue` and resolves once each says `ready`. */
export async function startPgBossWorkers(
  schema: string,
  queue: string,
  count: number,
  batch: number,
  idleMs: number,
): Promise<Child[]> {
  const script = `${here}/pgboss-worker.mjs`;
  return Promise.all(
    Array.from({ length: count }, async () => {
      const child = start([script, pgUrl, schema, queue, String(batch), String(idleMs)]);
      await new Promise<void>((resolve, reject) => {
        child.onLine((line) => {
          if (line === 'ready') resolve();
        });
        child.exited.then(() =>
          reject(new Error(`bench: a pg-boss worker died:\n${child.stderr()}`)),
        );
      });
      return child;
    }),
  );
}

/** The next line from `child` that `wanted` accepts. */
export function nextLine(child: Child, wanted: (line: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let done = false;
    child.onLine((line) => {
      if (done || !wanted(line)) return;
      done = true;
      resolve(line);
    });
    child.exited.then(() => {
      if (!done) reject(new Error(`bench: worker ${child.pid} exited:\n${child.stderr()}`));
    });
  });
}

const queriesLine = (line: string) => line.startsWith('queries ');

/** The statements the children's pools ran so far, summed (each is asked with SIGUSR2). */
export async function statements(children: readonly Child[]): Promise<number> {
  const counts = await Promise.all(
    children.map((child) => {
      const line = nextLine(child, queriesLine);
      child.proc.kill('SIGUSR2');
      return line;
    }),
  );
  return counts.reduce((sum, line) => sum + Number(line.slice('queries '.length)), 0);
}

/**
 * Pauses (SIGSTOP) or continues (SIGCONT) the children: the workers of one contender stay warm
 * but idle-poll nobody's server while the other contender is timed.
 */
export function pause(children: readonly Child[], paused: boolean): void {
  for (const child of children) child.proc.kill(paused ? 'SIGSTOP' : 'SIGCONT');
}

/** Stops the children with SIGTERM (they drain) and resolves once all have exited. */
export async function stopAll(children: readonly Child[]): Promise<void> {
  await Promise.all(
    children.map(async (child) => {
      child.proc.kill('SIGCONT');
      child.proc.kill('SIGTERM');
      const forced = setTimeout(() => child.proc.kill('SIGKILL'), 20_000);
      await child.exited;
      clearTimeout(forced);
    }),
  );
}

/** Kills a child at once (SIGKILL) and resolves when it is gone. */
export async function kill(child: Child): Promise<void> {
  child.proc.kill('SIGKILL');
  await child.exited;
}

const ticksPerSecond = 100; // Linux's USER_HZ, what /proc reports CPU time in

/** CPU time (ms, user + system) the children have used so far, read from /proc. */
export function cpuOf(children: readonly Child[]): number {
  let ticks = 0;
  for (const child of children) {
    try {
      // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
      const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // exited: its time is no longer counted, and a measurement spans no exit
    }
  }
  return (ticks / ticksPerSecond) * 1000;
}

/** CPU time (ms) the whole machine has spent busy so far, every core, from /proc/stat. */
export function machineCpu(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  // steal is time the hypervisor gave to someone else: not this machine's work
  const [user, nice, system, , , irq, softirq] = line.split(/\s+/).slice(1).map(Number);
  return ((user! + nice! + system! + irq! + softirq!) / ticksPerSecond) * 1000;
}

/**
 * Starts counting CPU time; the function returned tells, per unit of work since, the time (us)
 * the children used and the time the rest of the machine used (this process left out).
 */
export function cpuMeter(children: readonly Child[]) {
  const workers = cpuOf(children);
  const machine = machineCpu();
  const self = process.cpuUsage();
  return (units: number) => {
    const used = process.cpuUsage(self);
    const workerMs = cpuOf(children) - workers;
    const restMs = machineCpu() - machine - workerMs - (used.user + used.system) / 1000;
    return { workerCpuUs: (workerMs * 1000) / units, restCpuUs: (restMs * 1000) / units };
  };
}
