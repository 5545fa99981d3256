import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { append, END, type GraphBuilder, graph, isWaymarkError, run } from '../../src/index.js';
import { stores } from '../support/stores.js';

const Audit = z.object({
  system: z.string(),
  findings: z.array(z.string()).default([]),
  verified: z.array(z.string()).default([]),
  summary: z.string().default(''),
});
type Audit = z.output<typeof Audit>;

/**
 * The resilience-audit shape: 4 auditors side by side, then one verifier per finding (5 of them),
 * then, in the edited graph, a synthesis node appended at the end.
 */
function resilienceAudit(calls: Record<string, number>, withSynthesis: boolean) {
  const count = (name: string) => {
    calls[name] = (calls[name] ?? 0) + 1;
  };
  const auditor = (name: string, found: string[]) => () => {
    count(name);
    return { findings: found };
  };
  const b: GraphBuilder<Audit, string, z.input<typeof Audit>> = graph('resilience-audit', {
    state: Audit,
    reducers: { findings: append, verified: append },
  })
    .node('scope', () => count('scope'), { reads: ['system'] })
    .node('retries', auditor('retries', ['no retry on the payment call', 'retry storm on 503']), {
      reads: ['system'],
      writes: ['findings'],
    })
    .node('timeouts', auditor('timeouts', ['no timeout on the CMS client']), {
      reads: ['system'],
      writes: ['findings'],
    })
    .node('backups', auditor('backups', ['backups never restored']), {
      reads: ['system'],
      writes: ['findings'],
    })
    .node('limits', auditor('limits', ['no rate limit on login']), {
      reads: ['system'],
      writes: ['findings'],
    })
    .node('collect', () => count('collect'), { reads: [] })
    .node(
      'verify',
      (_s, ctx) => {
        count('verify');
        return { verified: [`checked: ${ctx.item}`] };
      },
      { reads: [], writes: ['verified'] },
    )
    .node('verified', () => count('verified'), { reads: [] })
    .fanOut('scope', ['retries', 'timeouts', 'backups', 'limits'], 'collect')
    .edge('retries', 'collect')
    .edge('timeouts', 'collect')
    .edge('backups', 'collect')
    .edge('limits', 'collect')
    .map('collect', { over: 'findings', branch: 'verify', join: 'verified' })
    .edge('verify', 'verified')
    .entry('scope');
  if (!withSynthesis) return b.edge('verified', END).compile();
  return b
    .node(
      'synthesis',
      (s) => {
        count('synthesis');
        return { summary: `${s.verified.length} findings verified` };
      },
      { reads: ['verified'] },
    )
    .edge('verified', 'synthesis')
    .edge('synthesis', END)
    .compile();
}

describe.each(stores)(
  'reusing outputs across runs of an edited graph, with the %s store',
  (_name, makeStore) => {
    it('runs only the appended synthesis node; every other activation is read back and marked reused', async () => {
      const store = makeStore();
      const first = resilienceAudit({}, false);
      const before = await run(first, { system: 'billing' }, { store });
      expect(before.status).toBe('succeeded');
      expect(before.state.verified).toHaveLength(5);

      const calls: Record<string, number> = {};
      const edited = resilienceAudit(calls, true);
      const after = await run(edited, { system: 'billing' }, { store, reuseFrom: before.runId });

      expect(after.status).toBe('succeeded');
      expect(calls).toEqual({ synthesis: 1 });
      expect(after.state.summary).toBe('5 findings verified');
      expect(after.state.verified).toEqual(before.state.verified);
      const entries = after.trace.entries;
      expect(entries.filter((e) => !e.reused).map((e) => e.node)).toEqual(['synthesis']);
      expect(entries.filter((e) => e.reused)).toHaveLength(entries.length - 1);
    });

    it('runs again what reads changed inputs, and reuses the rest', async () => {
      const store = makeStore();
      const before = await run(resilienceAudit({}, false), { system: 'billing' }, { store });
      const calls: Record<string, number> = {};
      await run(
        resilienceAudit(calls, true),
        { system: 'checkout' },
        { store, reuseFrom: before.runId },
      );
      // Nodes without `reads` read the whole state, so a new `system` changes every input.
      expect(calls).toMatchObject({ scope: 1, retries: 1, synthesis: 1 });
    });

    it('never reuses a node that does not declare what it reads', async () => {
      const store = makeStore();
      const S = z.object({ n: z.number() });
      let runs = 0;
      const g = graph('g', { state: S })
        .node('a', (s) => {
          runs++;
          return { n: s.n + 1 };
        })
        .edge('a', END)
        .entry('a')
        .compile();
      const first = await run(g, { n: 1 }, { store });
      await run(g, { n: 1 }, { store, reuseFrom: first.runId });
      expect(runs).toBe(2);
    });

    it('refuses reuseFrom a run the store does not have', async () => {
      const store = makeStore();
      const failure = await run(
        resilienceAudit({}, false),
        { system: 's' },
        { store, reuseFrom: 'nope' },
      ).catch((e: unknown) => e);
      expect(isWaymarkError(failure) && failure.code).toBe('RUN_NOT_FOUND');
    });
  },
);
