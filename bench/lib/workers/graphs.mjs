// The graphs of the worker benchmarks, built from whichever copy of waymark the caller loaded
// (the bench's tsc build in the parent and in every worker process): the same declarations, so
// the same structural hashes. Plain JavaScript, so a worker process starts without a loader.
//
// Nodes that a measurement times write `<what> <run> <activation> <ns>` to stdout, `ns` from
// process.hrtime.bigint(): CLOCK_MONOTONIC, one clock for every process on the machine.
import { z } from 'zod';

/** A line on stdout that the parent reads: the body of `ctx`'s activation started or ended. */
export function tell(what, ctx) {
  process.stdout.write(`${what} ${ctx.runId} ${ctx.activationId} ${process.hrtime.bigint()}\n`);
}

/** Parses a line `tell` wrote, or undefined for any other line. */
export function told(line) {
  const [what, runId, activation, ns] = line.trim().split(' ');
  if ((what !== 'start' && what !== 'end') || ns === undefined) return undefined;
  return { what, runId, activation, ns: BigInt(ns) };
}

export const chainLength = 10;
export const fanWidth = 100;
export const fanNodeMs = 50;
/** The widths of the wide-map measurement: per item, the wide one must cost what the narrow one does. */
export const wideWidths = [100, 1000];

/** The benchmark graphs, by name. */
export function benchGraphs(waymark) {
  const { END, append, graph } = waymark;
  const State = z.object({
    items: z.array(z.number()).default([]),
    out: z.array(z.number()).default([]),
    holdMs: z.number().default(0),
  });
  const options = { state: State, reducers: { out: append } };
  const noop = async () => ({});

  // One no-op node: one activation per run, the unit a job queue's job is.
  const one = graph('one', options).node('work', noop).edge('work', END).entry('work').compile();

  // Ten no-op nodes in a row: the activations of a workflow, scheduled by the run's fold.
  let chain = graph('chain10', options);
  for (let i = 0; i < chainLength; i++) {
    chain = chain.node(`n${i}`, noop);
    if (i > 0) chain = chain.edge(`n${i - 1}`, `n${i}`);
  }
  const chain10 = chain
    .edge(`n${chainLength - 1}`, END)
    .entry('n0')
    .compile();

  // A 100-way map of 50 ms nodes, every branch dispatched at once: the workers' concurrency is
  // what limits how many run together.
  const fan100 = graph('fan100', options)
    .node('split', async () => ({ items: Array.from({ length: fanWidth }, (_, i) => i) }))
    .node(
      'work',
      async (_s, ctx) => {
        await new Promise((resolve) => setTimeout(resolve, fanNodeMs));
        return { out: [ctx.item] };
      },
      { writes: ['out'] },
    )
    .node('join', noop)
    .map('split', { over: 'items', branch: 'work', join: 'join', concurrency: fanWidth })
    .edge('work', 'join')
    .edge('join', END)
    .entry('split')
    .compile();

  // Maps of no-op items, every item dispatched at once: 100 or 1,000 completions arriving
  // together at one run, which a hot run row would serialize.
  const wide = (width) =>
    graph(`map${width}`, options)
      .node('split', async () => ({ items: Array.from({ length: width }, (_, i) => i) }))
      .node('item', async (_s, ctx) => ({ out: [ctx.item] }), { writes: ['out'] })
      .node('join', noop)
      .map('split', { over: 'items', branch: 'item', join: 'join', concurrency: width })
      .edge('item', 'join')
      .edge('join', END)
      .entry('split')
      .compile();
  const [map100, map1000] = wideWidths.map(wide);

  // Two nodes that say when they start and end: the latencies.
  const pair = graph('pair', options)
    .node('a', async (_s, ctx) => {
      tell('start', ctx);
      tell('end', ctx);
      return {};
    })
    .node('b', async (_s, ctx) => {
      tell('start', ctx);
      return {};
    })
    .edge('a', 'b')
    .edge('b', END)
    .entry('a')
    .compile();

  // One node that holds its task for `holdMs`: what a killed worker leaves behind.
  const hold = graph('hold', options)
    .node('hold', async (s, ctx) => {
      tell('start', ctx);
      await new Promise((resolve) => setTimeout(resolve, s.holdMs));
      return {};
    })
    .edge('hold', END)
    .entry('hold')
    .compile();

  // A sleep until the time the input gives, then a node that says how late it started (ms of
  // the wall clock, the sleep's own clock). Absent from builds before sleep() existed.
  const nap =
    waymark.sleep === undefined
      ? undefined
      : graph('nap', { state: z.object({ wakeAt: z.number().default(0) }) })
          .node('nap', waymark.sleep({ until: (s) => s.wakeAt }))
          .node('after', async (s, ctx) => {
            process.stdout.write(`woke ${ctx.runId} ${Date.now() - s.wakeAt}\n`);
            return {};
          })
          .edge('nap', 'after')
          .edge('after', END)
          .entry('nap')
          .compile();

  // A wait for the event `go`, then a node that says when it started, by the monotonic clock
  // (one for every process on the machine), beside the time the signal was sent. Absent from
  // builds before event() existed.
  const cue =
    waymark.event === undefined
      ? undefined
      : graph('cue', { state: z.object({ sentNs: z.string().default('0') }) })
          .node('go', waymark.event({ name: 'go', schema: z.object({ sentNs: z.string() }) }))
          .node('after', async (s, ctx) => {
            const ns = process.hrtime.bigint() - BigInt(s.sentNs);
            process.stdout.write(`signalled ${ctx.runId} ${Number(ns) / 1e6}\n`);
            return {};
          })
          .edge('go', 'after')
          .edge('after', END)
          .entry('go')
          .compile();
  // One call to a shared resource limited to WAYMARK_BENCH_RPM requests a minute (default 60):
  // each body says when it started, by the wall clock every worker process shares. Absent from
  // builds before rate limits existed (their builder ignores the option: no `keepsRates`).
  const rpm = Number(process.env.WAYMARK_BENCH_RPM ?? 60);
  const metered =
    waymark.keepsRates === undefined
      ? undefined
      : graph('metered', { state: z.object({ n: z.number().default(0) }) })
          .node(
            'call',
            async (_s, ctx) => {
              process.stdout.write(`called ${ctx.runId} ${Date.now()}\n`);
              return { n: 1 };
            },
            { rateLimit: { resource: 'bench-api', requestsPerMinute: rpm } },
          )
          .edge('call', END)
          .entry('call')
          .compile();
  return {
    one,
    chain10,
    fan100,
    map100,
    map1000,
    pair,
    hold,
    ...(nap && { nap }),
    ...(cue && { cue }),
    ...(metered && { metered }),
  };
}
