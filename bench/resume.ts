// Durable runs on SQLite, two questions:
//
// 1. Does resuming cost more after a long history? A run of the 2-node loop stops failed at its
//    last node (`tail` always throws) after 10, or after 10,000, completed steps. One call resumes
//    it: waymark's `resume(store, graph, runId)`, LangGraph.js's `graph.invoke(null, { thread })`
//    on the thread that failed the same way. Both load the latest checkpoint, run `tail` once more
//    and stop failed again. Before every call (untimed) the run is put back as it was, so each
//    call resumes the same stored history.
// 2. How much does a run store? The loop runs 1,000 rounds whose `a` appends one 20-character
//    string to a list; the database file is measured once closed, its WAL folded in.
//
// Run alone: npm run bench -- resume

import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import {
  executions,
  langgraphLogLoopBuilder,
  logItem,
  tailFailure,
  waymarkLogLoop,
} from './lib/graphs.js';
import {
  type Contender,
  type ContenderResult,
  check,
  compare,
  pairedRatio,
  progress,
  type Stat,
  settingsFromEnv,
} from './lib/measure.js';
import { emit, type Row } from './lib/report.js';
import { runRestorer } from './lib/restore-run.js';
import { formatBytes, langgraphSaver, settledBytes, tempDir } from './lib/sqlite.js';
import { loadWaymarkSqlite, waymarkOrigin, wm } from './lib/waymark.js';

const { resume, run } = wm;
const { SqliteStore } = await loadWaymarkSqlite();

/** Completed node steps before the failing one: two per loop round. */
const histories = [10, 10_000] as const;
/**
 * The interrupted run: its process "dies" as the tail fails, with a snapshot every 100 events
 * (the default), after 10,098 steps the stored run ends 99 events past its last snapshot (seq
 * 10,000): the most a load replays.
 */
const interruptedSteps = 10_098;
/** Flat: resuming after 10,000 steps costs less than this many times resuming after 10. */
const flatGrowth = 1.5;
/** Loop rounds of the storage runs; each appends one item. 1,000 is the headline. */
const appendRounds = [250, 1_000, 10_000] as const;
const langgraphAppendRounds = [250, 1_000] as const;
const headlineRounds = 1_000;
const sizeTarget = 1024 * 1024;

const dir = tempDir('resume');
const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

// ---------------------------------------------------------------------------------------------
// waymark: one store file holding both failed runs. Its loadRun is wrapped to time the load.

const wmPath = join(dir, 'waymark.db');
const store = new SqliteStore({ path: wmPath });
let loadMs = 0;
const loadRun = store.loadRun.bind(store);
store.loadRun = async (runId) => {
  const t = performance.now();
  try {
    return await loadRun(runId);
  } finally {
    loadMs += performance.now() - t;
  }
};

const restorer = runRestorer(wmPath);

/** Thrown by the store below in place of recording the tail's failure: the process "died". */
const crash = 'simulated crash before the failure was recorded';

/**
 * The store, except that recording a failed status throws: the run stays stored as `running`
 * with its events since the last snapshot, as if its process died while the tail ran.
 */
const crashing = new Proxy(store, {
  get(target, prop) {
    if (prop === 'commit') {
      return async (runId: string, commit: Parameters<typeof store.commit>[1]) => {
        if (commit.status === 'failed') throw new Error(crash);
        return target.commit(runId, commit);
      };
    }
    const value = Reflect.get(target, prop);
    return typeof value === 'function' ? value.bind(target) : value;
  },
});

/**
 * A run of `steps` completed steps whose tail fails. `interrupted`: its process "died" before
 * the failure was recorded, so a resume replays the events after the last snapshot first.
 */
async function waymarkContender(steps: number, interrupted = false): Promise<Contender> {
  const g = waymarkLogLoop(steps / 2, { appendLog: false, failTail: true });
  let runId: string;
  if (interrupted) {
    runId = `interrupted-after-${steps}`;
    const outcome = await run(
      g,
      { i: 0, log: [] },
      { store: crashing, maxSteps: steps + 10, runId },
    ).then(
      (r) => r.status,
      (error: unknown) => message(error),
    );
    check(outcome === crash, `waymark run to interrupt ended: ${outcome}`);
  } else {
    const first = await run(g, { i: 0, log: [] }, { store, maxSteps: steps + 10 });
    check(
      first.status === 'failed' && first.error.message === tailFailure,
      `waymark ${steps}-step run ended ${first.status}`,
    );
    check(first.steps === steps, `waymark run completed ${first.steps} steps, not ${steps}`);
    runId = first.runId;
  }
  const status = interrupted ? 'running' : 'failed';
  const stored = await store.getRun(runId);
  check(stored?.status === status, `waymark stored the run as ${stored?.status}`);
  const replayed = (await loadRun(runId))?.events.length ?? -1;
  const name = interrupted
    ? `waymark interrupted after ${steps} (${replayed} events to replay)`
    : `waymark after ${steps}`;
  return {
    name,
    units: 1,
    prepare: async () => {
      restorer.restore(stored);
      const now = await store.getRun(runId);
      check(
        now?.seq === stored.seq && now.status === status,
        `waymark run not restored: seq ${now?.seq}, ${now?.status}`,
      );
    },
    call: async () => {
      executions.count = 0;
      loadMs = 0;
      const r = await resume(store, g, runId);
      check(
        r.status === 'failed' && r.error.message === tailFailure,
        `waymark resume ended ${r.status}`,
      );
      check(r.steps === steps, `waymark resume reports ${r.steps} steps`);
      check(executions.count === 1, `waymark resume ran ${executions.count} nodes, not the tail`);
      // The first failure (unless it was never recorded) and this one: more would mean the
      // restore missed a snapshot.
      const errors = interrupted ? 1 : 2;
      check(r.errors.length === errors, `waymark resume carries ${r.errors.length} errors`);
      return { load: loadMs };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// LangGraph.js: one SqliteSaver file, a thread per history length. Its getTuple (the read of the
// latest checkpoint, once per invoke) is wrapped to time the load.

const saver = langgraphSaver(join(dir, 'langgraph.db'));
let tupleMs = 0;
const getTuple = saver.getTuple.bind(saver);
saver.getTuple = async (config) => {
  const t = performance.now();
  try {
    return await getTuple(config);
  } finally {
    tupleMs += performance.now() - t;
  }
};

function rowsOf(db: SqliteSaver['db'], threadId: string): string {
  const count = (table: string) =>
    (
      db.prepare(`SELECT count(*) AS n FROM ${table} WHERE thread_id = ?`).get(threadId) as {
        n: number;
      }
    ).n;
  return `${count('checkpoints')} checkpoints, ${count('writes')} writes`;
}

async function langgraphContender(steps: number): Promise<Contender> {
  const g = langgraphLogLoopBuilder(steps / 2, { appendLog: false, failTail: true }).compile({
    checkpointer: saver,
  });
  const config = {
    configurable: { thread_id: `failed-after-${steps}` },
    recursionLimit: 2 * steps,
  };
  executions.count = 0;
  const failure = await g.invoke({ i: 0, log: [] }, config).then(
    () => 'succeeded',
    (error: unknown) => message(error),
  );
  check(failure === tailFailure, `LangGraph.js ${steps}-step run ended: ${failure}`);
  check(executions.count === steps + 1, `LangGraph.js run executed ${executions.count} nodes`);
  // A failed invoke leaves the thread as it was (the error is a pending write, replaced on each
  // retry): checked before every call rather than assumed.
  const rows = rowsOf(saver.db, config.configurable.thread_id);
  return {
    name: `LangGraph.js after ${steps}`,
    units: 1,
    prepare: async () => {
      const now = rowsOf(saver.db, config.configurable.thread_id);
      check(now === rows, `LangGraph.js thread grew from ${rows} to ${now}`);
    },
    call: async () => {
      executions.count = 0;
      tupleMs = 0;
      const outcome = await g.invoke(null, config).then(
        () => 'succeeded',
        (error: unknown) => message(error),
      );
      check(outcome === tailFailure, `LangGraph.js resume ended: ${outcome}`);
      check(executions.count === 1, `LangGraph.js resume ran ${executions.count} nodes`);
      return { load: tupleMs };
    },
  };
}

const settings = settingsFromEnv();
progress(`resume: preparing failed runs of ${histories.join(' and ')} steps on both engines`);
const prepStart = performance.now();
const contenders: Contender[] = [];
for (const steps of histories) contenders.push(await waymarkContender(steps));
for (const steps of histories) contenders.push(await langgraphContender(steps));
contenders.push(await waymarkContender(interruptedSteps, true));
progress(
  `resume: prepared in ${((performance.now() - prepStart) / 1000).toFixed(1)} s; warm-up ${settings.warmupMs} ms, ${settings.reps} repetitions of ~${settings.repMs} ms each`,
);
const results = await compare(contenders, { settings, minWarmUnits: 0, scale: 1000 });
const [wmShort, wmLong, lgShort, lgLong, wmInterrupted] = results as [
  ContenderResult,
  ContenderResult,
  ContenderResult,
  ContenderResult,
  ContenderResult,
];
restorer.close();
await store.close();
saver.db.close();

// ---------------------------------------------------------------------------------------------
// Storage: each run alone in a fresh file.

interface Stored {
  readonly rounds: number;
  /** The file on disk after close, WAL checkpointed into it. */
  readonly fileBytes: number;
  /** The bytes of the rows: waymark's events and snapshots, LangGraph.js's checkpoints and writes. */
  readonly rowBytes: number;
  readonly rows: string;
}

async function waymarkStorage(rounds: number): Promise<Stored> {
  const path = join(dir, `waymark-append-${rounds}.db`);
  const s = new SqliteStore({ path });
  const g = waymarkLogLoop(rounds, { appendLog: true, failTail: false });
  const r = await run(g, { i: 0, log: [] }, { store: s, maxSteps: 2 * rounds + 10 });
  check(r.status === 'succeeded', `waymark append run ended ${r.status}`);
  check(
    r.state.log.length === rounds && r.state.log[rounds - 1] === logItem(rounds),
    `waymark append run holds ${r.state.log.length} items`,
  );
  const usage = await s.usage(r.runId);
  await s.close();
  return {
    rounds,
    fileBytes: settledBytes(path),
    rowBytes: usage.eventBytes + usage.snapshotBytes,
    rows: `${usage.events} events (${formatBytes(usage.eventBytes)}), ${usage.snapshots} snapshots (${formatBytes(usage.snapshotBytes)})`,
  };
}

async function langgraphStorage(rounds: number): Promise<Stored> {
  const path = join(dir, `langgraph-append-${rounds}.db`);
  const s = langgraphSaver(path);
  const g = langgraphLogLoopBuilder(rounds, { appendLog: true, failTail: false }).compile({
    checkpointer: s,
  });
  const out = await g.invoke(
    { i: 0, log: [] },
    { configurable: { thread_id: 'append' }, recursionLimit: 2 * rounds + 10 },
  );
  check(
    out.log.length === rounds && out.log[rounds - 1] === logItem(rounds),
    `LangGraph.js append run holds ${out.log.length} items`,
  );
  const sum = (sql: string) =>
    (s.db.prepare(sql).get() as { n: number; bytes: number | null }) ?? 0;
  const checkpoints = sum(
    'SELECT count(*) AS n, sum(length(checkpoint) + length(metadata)) AS bytes FROM checkpoints',
  );
  const writes = sum('SELECT count(*) AS n, sum(length(value)) AS bytes FROM writes');
  s.db.close();
  return {
    rounds,
    fileBytes: settledBytes(path),
    rowBytes: (checkpoints.bytes ?? 0) + (writes.bytes ?? 0),
    rows: `${checkpoints.n} checkpoints (${formatBytes(checkpoints.bytes ?? 0)}), ${writes.n} writes (${formatBytes(writes.bytes ?? 0)})`,
  };
}

progress(`resume: storage runs of ${appendRounds.join(', ')} appending rounds`);
const wmStored: Stored[] = [];
for (const rounds of appendRounds) wmStored.push(await waymarkStorage(rounds));
const lgStored: Stored[] = [];
for (const rounds of langgraphAppendRounds) lgStored.push(await langgraphStorage(rounds));

// ---------------------------------------------------------------------------------------------
// The rows.

const fmt = (n: number) => (n >= 10 ? n.toFixed(1) : n.toFixed(2));
const growth = (s: Stat) => `x${fmt(s.median)} (${fmt(s.min)}-${fmt(s.max)})`;
const inUs = (s: Stat): Stat => ({
  median: s.median * 1000,
  min: s.min * 1000,
  max: s.max * 1000,
  reps: s.reps,
});
const wmGrowth = pairedRatio(wmLong, wmShort);
const lgGrowth = pairedRatio(lgLong, lgShort);
const perAppend = (s: Stored) => s.rowBytes / s.rounds;
const headline = (list: Stored[]) => list.find((s) => s.rounds === headlineRounds)!;
const wmHeadline = headline(wmStored);
const lgHeadline = headline(lgStored);
const perAppendWm = wmStored.map(perAppend);
const wmLinear = Math.max(...perAppendWm) / Math.min(...perAppendWm);
const counts = appendRounds.map((r) => r.toLocaleString('en-US')).join(' / ');

const rows: Row[] = [
  ...histories.map((steps, k) => ({
    measure: `resume a run failed after ${steps.toLocaleString('en-US')} steps`,
    unit: 'us',
    waymark: results[k]!.perUnit,
    peer: results[k + 2]!.perUnit,
    ratio: pairedRatio(results[k + 2]!, results[k]!).median,
  })),
  {
    measure: '  growth, 10,000 / 10 steps',
    unit: '',
    text: growth(wmGrowth),
    peerText: growth(lgGrowth),
    target: `flat: < ${flatGrowth}x`,
    met: wmGrowth.median < flatGrowth,
  },
  {
    measure: '  of which loading the run (10,000 steps)',
    unit: 'us',
    waymark: inUs(wmLong.parts.load!),
    peer: inUs(lgLong.parts.load!),
    ratio: lgLong.parts.load!.median / wmLong.parts.load!.median,
  },
  {
    measure: `resume a run interrupted after ${interruptedSteps.toLocaleString('en-US')} steps`,
    unit: 'us',
    waymark: wmInterrupted.perUnit,
  },
  {
    measure: `SQLite file after ${headlineRounds.toLocaleString('en-US')} appends`,
    unit: '',
    text: formatBytes(wmHeadline.fileBytes),
    peerText: formatBytes(lgHeadline.fileBytes),
    ratio: lgHeadline.fileBytes / wmHeadline.fileBytes,
    target: `< ${formatBytes(sizeTarget)}`,
    met: wmHeadline.fileBytes < sizeTarget,
  },
  {
    measure: `  stored bytes per append, ${counts} appends`,
    unit: '',
    text: perAppendWm.map(formatBytes).join(' / '),
    peerText: `${lgStored.map((s) => formatBytes(perAppend(s))).join(' / ')} / -`,
    target: 'linear: flat per append',
    met: wmLinear < flatGrowth,
  },
];

emit({
  scenario: 'resume',
  title: 'resume and storage on SQLite',
  waymarkOrigin,
  peerName: 'LangGraph.js',
  rows,
  notes: [
    'resume: one call = waymark resume() / LangGraph.js invoke(null) of a run whose last node failed: load the latest checkpoint, run that node again, record the new failure; the run is put back before each call (untimed). Loading = waymark store.loadRun, LangGraph.js SqliteSaver.getTuple.',
    `resume: the interrupted run is stored as running, its process gone before the tail's failure was recorded; resume reads its last snapshot and replays ${wmInterrupted.name.match(/\((\d+) events/)?.[1] ?? '?'} events after it, then runs the tail (waymark only: a LangGraph.js thread always resumes from its latest checkpoint).`,
    `storage: the 2-node loop whose a appends one 20-character string per round (2 node steps per append), each run alone in a fresh file, size after close with the WAL checkpointed in. waymark: ${wmStored.map((s) => `${s.rounds} rounds ${formatBytes(s.fileBytes)} file, ${s.rows}`).join('; ')}. LangGraph.js: ${lgStored.map((s) => `${s.rounds} rounds ${formatBytes(s.fileBytes)} file, ${s.rows}`).join('; ')}.`,
  ],
  details: {
    settings,
    resume: Object.fromEntries(results.map((r) => [r.name, r])),
    storage: { waymark: wmStored, langgraph: lgStored },
  },
});
