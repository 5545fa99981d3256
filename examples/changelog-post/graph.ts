import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { append, graph, permanentError, person } from '../../src/index.js';
import { type ModelRef, model, modelName } from '../../src/model/index.js';
import { cms } from './cms.js';
import { systems, withData } from './prompts.js';
import { Approval, backs, DraftReply, Entry, Section, State, Verdict } from './schema.js';
import { scriptedWriter } from './scripted.js';

/** The bundled changelog that fetch reads. */
export const changelogFile = fileURLToPath(new URL('./CHANGELOG.md', import.meta.url));

/** Names in `WAYMARK_FAULTS` (comma list), read when a node runs, not when this file loads. */
export function faults(): string[] {
  return (process.env.WAYMARK_FAULTS ?? '')
    .split(',')
    .map((f) => f.trim())
    .filter((f) => f !== '');
}

/** Every `- entry` of a Keep a Changelog file, with its `## [version]` and `### section`. */
export function parseChangelog(markdown: string): Entry[] {
  const entries: Entry[] = [];
  let version: string | undefined;
  let section = 'Changed';
  for (const line of markdown.split('\n')) {
    const release = /^## \[?([^\]\s]+)\]?/.exec(line);
    const heading = /^### (.+)$/.exec(line);
    const item = /^[-*] (.+)$/.exec(line);
    if (release) version = release[1];
    else if (heading) section = heading[1]!.trim();
    else if (item && version !== undefined)
      entries.push({ version, section, text: item[1]!.trim() });
  }
  return entries;
}

/** Options of {@link changelogPost}. */
export interface ChangelogPostOptions {
  /**
   * The model of the four model steps: an AI SDK model object or `provider:model-id`. Default:
   * the scripted model (scripted.ts), offline. A run's `model` (`--model`) overrides it.
   */
  readonly model?: ModelRef;
}

/** Retries for a model call that failed on the way (network, 5xx, 429). */
const modelRetry = { attempts: 3, backoffMs: 1_000 } as const;

/**
 * Dollars per million tokens, for the cost in usage, budgets and the worst case: gpt-4o-mini's,
 * and the same for the scripted model, which stands in for it.
 */
export const prices = {
  'openai:gpt-4o-mini': { inputPerMillion: 0.15, outputPerMillion: 0.6 },
  'scripted:changelog-post': { inputPerMillion: 0.15, outputPerMillion: 0.6 },
} as const;

/** Each model step's budget per attempt (input + output tokens over its calls). */
export const stepTokens = { select: 6_000, outline: 5_000, draft: 10_000, 'fact-check': 12_000 };

/**
 * Changelog to blog post: fetch the changelog, select a release's entries, outline, draft,
 * fact-check the draft against the WHOLE changelog (a finding sends it back to draft), ask an
 * editor (a rejection with a note sends it back to draft too), then publish once, under an
 * idempotency key, into the file-backed CMS. select, outline, draft and fact-check are model
 * nodes calling `options.model`; the graph is the same whatever model runs.
 */
export function changelogPost(options: ChangelogPostOptions = {}) {
  const writer = options.model ?? scriptedWriter();
  const judge = model<State, { verdicts: Verdict[] }>({
    model: writer,
    system: systems['fact-check'],
    prompt: (s) =>
      withData('Judge every claim of this draft against the changelog.', {
        claims: s.draft?.claims ?? [],
        changelog: s.changelog,
      }),
    output: z.object({ verdicts: z.array(Verdict) }),
    temperature: 0,
    maxTokens: stepTokens['fact-check'],
    prices,
    // The deterministic half of the fact-check: a verdict must be about a claim of the draft,
    // and "backed" must cite a line the changelog has. What fails goes to quarantine.
    checkItems: {
      verdicts: (v, s) => {
        const claim = s.draft?.claims.find((c) => c.text === v.claim);
        if (!claim) return ['claim-not-in-draft'];
        return v.backed && !backs(s.changelog, claim) ? ['cited-line-not-in-changelog'] : [];
      },
    },
    // Every claim without a backed verdict that passed the check is a finding.
    update: ({ verdicts }, s) => ({
      findings: (s.draft?.claims ?? []).flatMap((c) => {
        const verdict = verdicts.find((v) => v.claim === c.text);
        if (verdict?.backed) return [];
        const reason =
          verdict?.reason ??
          (backs(s.changelog, c)
            ? 'the fact-check gave no verdict on it'
            : `no ${c.version} entry in the changelog says "${c.source}"`);
        return [{ claim: c.text, reason }];
      }),
    }),
  });

  return graph('changelog-post', { state: State, version: 1, reducers: { notes: append } })
    .node(
      'fetch',
      async () => ({ changelog: parseChangelog(await readFile(changelogFile, 'utf8')) }),
      { reads: [], writes: ['changelog'] },
    )
    .node(
      'select',
      model({
        model: writer,
        system: systems.select,
        prompt: (s) =>
          withData(`Select the ${s.version} entries for the post.`, {
            version: s.version,
            changelog: s.changelog,
          }),
        output: z.object({ selected: z.array(Entry) }),
        temperature: 0,
        maxTokens: stepTokens.select,
        prices,
        checkItems: {
          selected: (e, s) =>
            e.version !== s.version
              ? ['other-version']
              : s.changelog.some((c) => c.section === e.section && c.text === e.text)
                ? []
                : ['not-in-changelog'],
        },
        update: ({ selected }, s) => {
          if (selected.length === 0)
            throw permanentError(`the changelog has no ${s.version} entries`);
          return { selected };
        },
      }),
      { retry: modelRetry, reads: ['changelog', 'version'], writes: ['selected'] },
    )
    .node(
      'outline',
      model({
        model: writer,
        system: systems.outline,
        prompt: (s) =>
          withData(`Outline the post about release ${s.version}.`, {
            version: s.version,
            selected: s.selected,
          }),
        output: z.object({ outline: z.array(Section) }),
        temperature: 0,
        maxTokens: stepTokens.outline,
        prices,
        checkItems: {
          outline: (section, s) =>
            section.entries.every((e) => s.selected.some((x) => x.text === e.text))
              ? []
              : ['entry-not-selected'],
        },
      }),
      { retry: modelRetry, reads: ['selected', 'version'], writes: ['outline'] },
    )
    .node(
      'draft',
      model({
        model: writer,
        system: systems.draft,
        prompt: (s) =>
          withData(
            s.draft === null
              ? `Write the post about Ledgerly ${s.version} from this outline.`
              : `Revise draft ${s.draft.revision}: drop the flagged claims, answer new editor notes.`,
            {
              version: s.version,
              outline: s.outline,
              previous: s.draft,
              findings: s.findings,
              notes: s.notes,
            },
          ),
        output: DraftReply,
        temperature: 0,
        maxTokens: stepTokens.draft,
        prices,
        // The revision is counted here, not by the model.
        update: (reply, s) => ({ draft: { revision: (s.draft?.revision ?? 0) + 1, ...reply } }),
      }),
      // First draft, one fix after fact-check, two rounds of editor notes.
      {
        visits: 4,
        retry: modelRetry,
        reads: ['version', 'outline', 'draft', 'findings', 'notes'],
        writes: ['draft'],
      },
    )
    .node(
      'fact-check',
      (s, ctx) => {
        if (faults().includes('fact-check'))
          throw new Error('fact-check service unavailable (injected by WAYMARK_FAULTS)');
        // The whole changelog, not the selected entries: a post may rightly mention an earlier release.
        return judge(s, ctx);
      },
      {
        // Wrapped for the fault switch, so the kind and the judge's spend are said here.
        kind: 'model',
        spend: { calls: 3, maxTokens: stepTokens['fact-check'], prices },
        // A thrown error is transient: tried twice, then the run fails here with its checkpoint kept.
        retry: { attempts: 2, backoffMs: 20 },
        // `findings` is read by the router, which sends a draft with findings back.
        reads: ['draft', 'changelog', 'findings'],
        writes: ['findings'],
      },
    )
    .node(
      'approve',
      person({
        prompt: (s) =>
          `Publish "${s.draft?.title}" (draft ${s.draft?.revision})?\n\n${s.draft?.body ?? ''}`,
        answer: Approval,
        update: (a) => ({ approved: a.approved, notes: a.note === undefined ? [] : [a.note] }),
      }),
    )
    .node(
      'publish',
      async (s, ctx) => {
        const draft = s.draft!;
        // Which model wrote it: the run's (--model), else the graph's own.
        const by = ctx.model ?? modelName(writer);
        const post = { version: s.version, title: draft.title, body: draft.body, model: by };
        const stored = await ctx.effect('publish', (key) => cms.publish(key, post));
        return { published: { id: stored.id, key: stored.key, url: stored.url } };
      },
      {
        kind: 'effect',
        terminal: true,
        // A repeated attempt sends the same key: the CMS returns the post it already has.
        retry: { attempts: 3, backoffMs: 50 },
        reads: ['version', 'draft'],
        writes: ['published'],
      },
    )
    .edge('fetch', 'select')
    .edge('select', 'outline')
    .edge('outline', 'draft')
    .edge('draft', 'fact-check')
    .route('fact-check', (s) => (s.findings.length > 0 ? 'draft' : 'approve'), ['draft', 'approve'])
    .route('approve', (s) => (s.approved ? 'publish' : 'draft'), ['publish', 'draft'])
    .entry('fetch')
    .compile();
}

export default changelogPost();
