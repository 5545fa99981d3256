// What `waymark serve` costs: events per second delivered to 100 concurrent SSE clients of one
// busy run (a 300-step loop on a SQLite file, started through the API), and the server's added
// latency per request (GET /runs/:id over HTTP on 127.0.0.1, against the store call it makes).
//
//   npm run bench -- serve
//
// Printed, never asserted.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { check, progress, settingsFromEnv, stat } from './lib/measure.js';
import { emit, type Row } from './lib/report.js';
import { loadWaymarkSqlite, waymarkOrigin, wm } from './lib/waymark.js';

const settings = settingsFromEnv();
const quick = settings.reps < 7;
const clients = 100;
const steps = quick ? 100 : 300;
const work = mkdtempSync(join(tmpdir(), 'waymark-serve-'));
const { SqliteStore } = await loadWaymarkSqlite();
const server: typeof import('../src/server.js') = process.env.BENCH_WAYMARK_BUILD
  ? await import(new URL('server.js', pathToFileURL(process.env.BENCH_WAYMARK_BUILD)).href)
  : await import('../src/server.js');

const loop = wm
  .graph('serve-bench', { state: z.object({ n: z.number().default(0) }) })
  .node('tick', async (s) => ({ n: s.n + 1 }), { visits: steps })
  .route('tick', (s) => (s.n < steps ? 'tick' : wm.END), ['tick', wm.END])
  .entry('tick')
  .compile();

const store = new SqliteStore({ path: join(work, 'runs.db') });
const served = await server.serve({ store, graphs: [loop], token: 'bench' });
const headers = { authorization: 'Bearer bench', 'content-type': 'application/json' };

/** Reads one SSE stream to its end; how many events it carried. */
async function follow(runId: string): Promise<number> {
  const res = await fetch(`${served.url}/runs/${runId}/events`, { headers });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let events = 0;
  let tail = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return events;
    const text = tail + value;
    const blocks = text.split('\n\n');
    tail = blocks.pop()!;
    events += blocks.filter((b) => b.includes('data:')).length;
  }
}

let runs = 0;
/** One busy run, started through the API, followed by `clients` SSE clients from its start. */
async function fanOutRep(): Promise<{ eventsPerSecond: number; perClient: number }> {
  const runId = `r${++runs}`;
  const t0 = performance.now();
  const res = await fetch(`${served.url}/runs`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ graph: 'serve-bench', input: {}, runId }),
  });
  check(res.status === 202, `starting ${runId} answered ${res.status}`);
  const counts = await Promise.all(Array.from({ length: clients }, () => follow(runId)));
  const seconds = (performance.now() - t0) / 1000;
  check(
    counts.every((n) => n === counts[0]),
    `the clients of ${runId} got different counts of events`,
  );
  return { eventsPerSecond: counts.reduce((a, b) => a + b, 0) / seconds, perClient: counts[0]! };
}

/** Per call, in us: GET /runs/:id over HTTP, and the store's getRun it makes. */
async function latencyRep(runId: string): Promise<{ http: number; store: number }> {
  const n = quick ? 50 : 200;
  let t = performance.now();
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${served.url}/runs/${runId}`, { headers });
    await res.arrayBuffer();
  }
  const http = ((performance.now() - t) * 1000) / n;
  t = performance.now();
  for (let i = 0; i < n; i++) await wm.inspect(store, loop, runId);
  return { http, store: ((performance.now() - t) * 1000) / n };
}

progress(
  `serve: warm-up ${settings.warmupMs} ms, then ${settings.reps} runs of ${steps} steps with ${clients} SSE clients each`,
);
const warmUntil = Date.now() + settings.warmupMs;
while (Date.now() < warmUntil) await fanOutRep();
const fan: number[] = [];
const http: number[] = [];
const direct: number[] = [];
let perClient = 0;
for (let i = 0; i < settings.reps; i++) {
  const r = await fanOutRep();
  fan.push(r.eventsPerSecond);
  perClient = r.perClient;
  const l = await latencyRep(`r${runs}`);
  http.push(l.http);
  direct.push(l.store);
}
await served.close();
await store.close();
rmSync(work, { recursive: true, force: true });

const rows: Row[] = [
  {
    measure: `events/s delivered to ${clients} SSE clients of one busy run (${perClient} events each)`,
    unit: 'events/s',
    waymark: stat(fan),
  },
  { measure: 'GET /runs/:id over HTTP, per request', unit: 'us', waymark: stat(http) },
  { measure: '  the same read through the library (inspect)', unit: 'us', waymark: stat(direct) },
  {
    measure: '  added by the server',
    unit: 'us',
    waymark: stat(http.map((h, i) => h - direct[i]!)),
  },
];
emit({
  scenario: 'serve',
  title: 'waymark serve: SSE fan-out and added latency',
  waymarkOrigin,
  rows,
  notes: [
    `serve: SQLite store in a temp dir, the server on 127.0.0.1 in this process (its runs too); each repetition starts a ${steps}-step loop through POST /runs and ${clients} clients read GET /runs/:id/events from its start to its end (events/s = all events delivered / wall time from the POST); latency: ${quick ? 50 : 200} sequential GET /runs/:id of the finished run, against inspect() on the same store; ${settings.reps} repetitions.`,
  ],
  details: { clients, steps, eventsPerSecond: fan, httpUs: http, inspectUs: direct },
});
process.exit(0);
