// The graphs of the chaos and zombie tests, built from whichever copy of waymark the caller
// loaded (the parent's src/ through vitest, a child's plain-JavaScript build): the same
// declarations, so the same structural hashes. Every node body appends
// `run activation attempt pid start-ms` to the executions log as it starts, so the parent can
// tell which bodies ran where, and when.
import { appendFileSync } from 'node:fs';
import { z } from 'zod';

/** The chaos graphs, by name. `receiver` is the URL effects post to. */
export function chaosGraphs(waymark, { log, receiver }) {
  const { all, append, END, graph, person } = waymark;
  const State = z.object({
    log: z.array(z.string()).default([]),
    n: z.number().default(0),
    items: z.array(z.string()).default([]),
    receipt: z.string().default(''),
    approved: z.boolean().default(false),
    who: z.string().default(''),
  });
  const reducers = { log: append };
  const started = (ctx) =>
    appendFileSync(
      log,
      `${ctx.runId} ${ctx.activationId} ${ctx.attempt} ${process.pid} ${Date.now()}\n`,
    );
  const body =
    (name, ms = 10) =>
    async (_s, ctx) => {
      started(ctx);
      await new Promise((resolve) => setTimeout(resolve, ms));
      return { log: [name] };
    };
  const post = async (_s, ctx) => {
    started(ctx);
    const receipt = await ctx.effect('post', async (key) => {
      const response = await fetch(receiver, {
        method: 'POST',
        headers: { 'idempotency-key': key },
      });
      if (!response.ok) throw new Error(`receiver said ${response.status}`);
      return (await response.json()).receipt;
    });
    return { receipt, log: ['posted'] };
  };
  const retry = { retry: { attempts: 5, backoffMs: 50 } };

  let chain = graph('chain', { state: State, reducers });
  for (let i = 0; i < 5; i++) {
    chain = chain.node(`s${i}`, body(`s${i}`), retry);
    if (i > 0) chain = chain.edge(`s${i - 1}`, `s${i}`);
  }
  chain = chain.edge('s4', END).entry('s0').compile();

  const loop = graph('loop', { state: State, reducers })
    .node(
      'count',
      async (s, ctx) => {
        started(ctx);
        return { n: s.n + 1, log: [`count ${s.n + 1}`] };
      },
      { visits: 5, ...retry },
    )
    .route('count', (s) => (s.n >= 3 ? END : 'count'), ['count', END])
    .entry('count')
    .compile();

  let fan = graph('fan20', { state: State, reducers }).node('split', body('split'), retry);
  const branches = Array.from({ length: 20 }, (_, i) => `b${i}`);
  for (const b of branches)
    fan = fan.node(b, body(b, 5), { writes: ['log'], ...retry }).edge(b, 'merge');
  fan = fan
    .node('merge', body('merge'), { join: all(), terminal: true })
    .fanOut('split', branches, 'merge')
    .entry('split')
    .compile();

  const map = graph('map200', { state: State, reducers })
    .node(
      'list',
      async (_s, ctx) => {
        started(ctx);
        return { items: Array.from({ length: 200 }, (_, i) => `i${i}`) };
      },
      retry,
    )
    .node(
      'item',
      async (_s, ctx) => {
        started(ctx);
        return { log: [String(ctx.item)] };
      },
      { writes: ['log'], ...retry },
    )
    .node('done', body('done'), { join: all(), terminal: true })
    .map('list', { over: 'items', branch: 'item', join: 'done', concurrency: 32 })
    .edge('item', 'done')
    .entry('list')
    .compile();

  const approval = graph('approval', { state: State, reducers })
    .node('draft', body('draft'), retry)
    .node('approve', person({ prompt: 'publish?', answer: z.object({ approved: z.boolean() }) }))
    .node('publish', post, { kind: 'effect', terminal: true, ...retry })
    .edge('draft', 'approve')
    .edge('approve', 'publish')
    .entry('draft')
    .compile();

  const effect = graph('effect', { state: State, reducers })
    .node('prepare', body('prepare'), retry)
    .node('send', post, { kind: 'effect', terminal: true, ...retry })
    .edge('prepare', 'send')
    .entry('prepare')
    .compile();

  // One slow node that says which process ran it: what the zombie test takes over.
  const zombie = graph('zombie', { state: State, reducers })
    .node('slow', async (_s, ctx) => {
      started(ctx);
      await new Promise((resolve) =>
        setTimeout(resolve, Number(process.env.ZOMBIE_NODE_MS ?? 3000)),
      );
      return { who: String(process.pid) };
    })
    .node('after', body('after'), { terminal: true })
    .edge('slow', 'after')
    .entry('slow')
    .compile();

  return { chain, loop, fan20: fan, map200: map, approval, effect, zombie };
}
