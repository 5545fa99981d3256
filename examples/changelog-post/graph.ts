import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { append, graph, permanentError, person } from '../../src/index.js';
import { cms } from './cms.js';
import { Approval, type Entry, State } from './schema.js';
import { scripted, type Writer } from './scripted.js';

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

/**
 * Changelog to blog post: fetch the changelog, select a release's entries, outline, draft,
 * fact-check the draft against the WHOLE changelog (a finding sends it back to draft), ask an
 * editor (a rejection with a note sends it back to draft too), then publish once, under an
 * idempotency key, into the file-backed CMS. `writer` does the four model steps.
 */
export function changelogPost(writer: Writer = scripted) {
  return graph('changelog-post', { state: State, version: 1, reducers: { notes: append } })
    .node(
      'fetch',
      async () => ({ changelog: parseChangelog(await readFile(changelogFile, 'utf8')) }),
      { reads: [], writes: ['changelog'] },
    )
    .node(
      'select',
      async (s) => {
        const selected = await writer.select({ changelog: s.changelog, version: s.version });
        if (selected.length === 0)
          throw permanentError(`the changelog has no ${s.version} entries`);
        return { selected };
      },
      { reads: ['changelog', 'version'], writes: ['selected'] },
    )
    .node(
      'outline',
      async (s) => ({
        outline: await writer.outline({ selected: s.selected, version: s.version }),
      }),
      { reads: ['selected', 'version'], writes: ['outline'] },
    )
    .node(
      'draft',
      async (s) => ({
        draft: await writer.draft({
          version: s.version,
          outline: s.outline,
          previous: s.draft,
          findings: s.findings,
          notes: s.notes,
        }),
      }),
      // First draft, one fix after fact-check, two rounds of editor notes.
      { visits: 4, reads: ['version', 'outline', 'draft', 'findings', 'notes'], writes: ['draft'] },
    )
    .node(
      'fact-check',
      async (s) => {
        if (faults().includes('fact-check'))
          throw new Error('fact-check service unavailable (injected by WAYMARK_FAULTS)');
        // The whole changelog, not the selected entries: a post may rightly mention an earlier release.
        return {
          findings: await writer.judge({ claims: s.draft?.claims ?? [], changelog: s.changelog }),
        };
      },
      {
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
        const post = { version: s.version, title: draft.title, body: draft.body };
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
