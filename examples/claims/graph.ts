import { z } from 'zod';
import { append, graph, permanentError, union } from '../../src/index.js';
import { type ModelRef, model, modelName } from '../../src/model/index.js';
import { search, source } from './corpus.js';
import { systems, withData } from './prompts.js';
import { scriptedResearcher } from './scripted.js';

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

type Statement = z.infer<typeof State>['statements'][number];

/** Options of {@link claims}. */
export interface ClaimsOptions {
  /**
   * The model of plan and write: an AI SDK model object or `provider:model-id`. Default: the
   * scripted model (scripted.ts), offline. A run's `model` (`--model`) overrides it.
   */
  readonly model?: ModelRef;
}

/** Retries for a model call that failed on the way (network, 5xx, 429). */
const modelRetry = { attempts: 3, backoffMs: 1_000 } as const;

/**
 * The research agent from DESIGN.md: plan queries, search, rank, write a cited answer, verify
 * every citation, and loop back to plan (at most 3 times) while something is unverified. A node
 * that fails for good (search out of retries, plan past its visit cap, verify with nothing to
 * check) routes to publish, which reports the errors recorded. plan and write are model nodes
 * calling `options.model`; search, rank and verify are code, and verify's citation check is
 * never a model's opinion. The graph is the same whatever model runs.
 */
export function claims(options: ClaimsOptions = {}) {
  const researcher = options.model ?? scriptedResearcher();
  return graph('claims', {
    state: State,
    version: 1,
    reducers: { sources: union, log: append },
  })
    .node(
      'plan',
      model({
        model: researcher,
        system: systems.plan,
        prompt: (s) =>
          withData('Plan the searches for this claim.', {
            claim: s.claim,
            unverified: s.unverified,
          }),
        output: z.object({ queries: z.array(z.string()) }),
        temperature: 0,
        checkItems: { queries: (q) => (q.trim() === '' ? ['query-empty'] : []) },
        update: ({ queries }, s) => ({
          queries,
          // A second round searches for what the first could not verify.
          log: [
            `plan: ${s.unverified.length > 0 ? 're-plan for unverified statements' : 'first plan'}`,
          ],
        }),
      }),
      // Past the cap the loop gives up: the VISIT_CAP error goes to publish with what there is.
      {
        visits: 3,
        retry: modelRetry,
        onError: 'publish',
        reads: ['claim', 'unverified'],
        writes: ['queries', 'log'],
      },
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
      model({
        model: researcher,
        system: systems.write,
        prompt: (s) =>
          withData('Answer the claim, citing the two best sources.', {
            claim: s.claim,
            ranked: s.ranked,
            previous: s.statements,
            unverified: s.unverified,
          }),
        output: z.object({
          statements: z.array(z.object({ text: z.string(), source: z.string() })),
        }),
        temperature: 0,
        // A statement must cite a source the search found; verify then checks its words.
        checkItems: {
          statements: (st, s) =>
            s.ranked.some((r) => r.id === st.source) ? [] : ['source-unknown'],
        },
        update: ({ statements }, s) => ({
          statements,
          log: [
            statements.every((st) => quoted(st, s.ranked))
              ? 'write: drafted (quoted)'
              : 'write: drafted (paraphrased)',
          ],
        }),
      }),
      {
        retry: modelRetry,
        reads: ['claim', 'ranked', 'statements', 'unverified'],
        writes: ['statements', 'log'],
      },
    )
    .node(
      'verify',
      (s) => {
        // An answer without a single citation is not verified, it is a failed check.
        if (s.statements.length === 0)
          throw permanentError('nothing to verify: the search found no source for the claim');
        const unverified = s.statements.filter((st) => !quoted(st, s.ranked)).map((st) => st.text);
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
          // Which model planned and wrote: the run's (--model), else the graph's own.
          byModel(ctx.model ?? modelName(researcher)),
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
}

/** The report's last line: which model planned and wrote, and whether it was a scripted one. */
function byModel(name: string): string {
  return name.startsWith('scripted:')
    ? `(plan and write: ${name}, the scripted model; --model names a real one)`
    : `(plan and write: ${name})`;
}

/** Whether a statement's text appears word for word in the ranked source it cites. */
function quoted(st: Statement, ranked: readonly { id: string; text: string }[]): boolean {
  return ranked.find((r) => r.id === st.source)?.text.includes(st.text) ?? false;
}

export default claims();
