import { z } from 'zod';
import { append, graph, permanentError, union } from '../../src/index.js';
import { search, source } from './corpus.js';

/**
 * The research agent from DESIGN.md: plan queries, search, rank, write a cited answer, verify
 * every citation, and loop back to plan (at most 3 times) while something is unverified. A node
 * that fails for good (search out of retries, plan past its visit cap, verify with nothing to
 * check) routes to publish, which reports the errors recorded.
 */
export const State = z.object({
  claim: z.string().min(1),
  queries: z.array(z.string()).default([]),
  sources: z.array(z.string()).default([]),
  ranked: z.array(z.object({ id: z.string(), text: z.string(), score: z.number() })).default([]),
  statements: z.array(z.object({ text: z.string(), source: z.string() })).default([]),
  unverified: z.array(z.string()).default([]),
  report: z.string().default(''),
  log: z.array(z.string()).default([]),
});

export default graph('claims', {
  state: State,
  version: 1,
  reducers: { sources: union, log: append },
})
  .node(
    'plan',
    (s) => ({
      // A second round searches for what the first could not verify.
      queries: s.unverified.length > 0 ? s.unverified : [s.claim],
      log: [
        `plan: ${s.unverified.length > 0 ? 're-plan for unverified statements' : 'first plan'}`,
      ],
    }),
    // Past the cap the loop gives up: the VISIT_CAP error goes to publish with what there is.
    { visits: 3, onError: 'publish', writes: ['queries', 'log'] },
  )
  .node(
    'search',
    (s, ctx) => {
      // The first attempt of the first search fails, as real search APIs do; the retry policy absorbs it.
      if (ctx.activationId === 'search:1' && ctx.attempt === 1)
        throw new Error('search API answered 503');
      const found = s.queries.flatMap((q) => search(q).map((src) => src.id));
      return { sources: found, log: [`search: ${found.length} hit(s)`] };
    },
    {
      retry: { attempts: 3, backoffMs: 10 },
      timeoutMs: 5_000,
      onError: 'publish',
      reads: ['queries'],
      writes: ['sources', 'log'],
    },
  )
  .node(
    'rank',
    (s) => {
      const words = new Set(s.claim.toLowerCase().split(/\W+/));
      const ranked = s.sources
        .flatMap((id) => source(id) ?? [])
        .map((src) => ({
          id: src.id,
          text: src.text,
          score: src.text
            .toLowerCase()
            .split(/\W+/)
            .filter((w) => words.has(w)).length,
        }))
        .sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
      return { ranked, log: [`rank: best is ${ranked[0]?.id ?? 'nothing'}`] };
    },
    { reads: ['claim', 'sources'], writes: ['ranked', 'log'] },
  )
  .node(
    'write',
    (s, ctx) => {
      const quote = (text: string) => text.split('. ')[0] ?? text;
      // The first draft paraphrases its best source, as a model would; verify catches it.
      const paraphrase = ctx.activationId === 'write:1';
      const statements = s.ranked.slice(0, 2).map((r, i) => ({
        text: paraphrase && i === 0 ? 'Tea arrived in Europe around 1600' : quote(r.text),
        source: r.id,
      }));
      return {
        statements,
        log: [paraphrase ? 'write: drafted (paraphrased)' : 'write: drafted (quoted)'],
      };
    },
    { reads: ['ranked'], writes: ['statements', 'log'] },
  )
  .node(
    'verify',
    (s) => {
      // An answer without a single citation is not verified, it is a failed check.
      if (s.statements.length === 0)
        throw permanentError('nothing to verify: the search found no source for the claim');
      const byId = new Map(s.ranked.map((r) => [r.id, r.text]));
      const unverified = s.statements
        .filter((st) => !byId.get(st.source)?.includes(st.text))
        .map((st) => st.text);
      return { unverified, log: [`verify: ${unverified.length} unverified`] };
    },
    {
      onError: 'publish',
      // `unverified` is read by the router, which plans again while claims stay unverified.
      reads: ['statements', 'ranked', 'unverified'],
      writes: ['unverified', 'log'],
    },
  )
  .node(
    'publish',
    (s, ctx) => ({
      report: [
        `Claim: ${s.claim}`,
        ...s.statements.map((st) => `- ${st.text} [${st.source}]`),
        ctx.errors.length > 0
          ? `(published with ${ctx.errors.length} error(s) recorded)`
          : '(all citations verified)',
      ].join('\n'),
      log: ['publish: done'],
    }),
    { terminal: true, writes: ['report', 'log'] },
  )
  .edge('plan', 'search')
  .edge('search', 'rank')
  .edge('rank', 'write')
  .edge('write', 'verify')
  .route('verify', (s) => (s.unverified.length > 0 ? 'plan' : 'publish'), ['plan', 'publish'])
  .entry('plan')
  .compile();
