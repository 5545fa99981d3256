import type { Claim, Draft, Entry, Finding, Section } from './schema.js';

/** What draft works from: the outline, its previous draft, and what was said about that one. */
export interface DraftInput {
  readonly version: string;
  readonly outline: readonly Section[];
  /** The draft before this one, or null for the first. */
  readonly previous: Draft | null;
  /** Fact-check's findings on `previous`: claims the changelog does not back. */
  readonly findings: readonly Finding[];
  /** Every editor note so far; the ones `previous` has not addressed are new. */
  readonly notes: readonly string[];
}

/**
 * The four steps a model does in this pipeline. The graph calls them through this interface
 * only, so a model-backed writer (structured output against the zod schemas in schema.ts)
 * replaces the scripted one by being passed to `changelogPost(writer)`, with no graph change.
 */
export interface Writer {
  /** The entries of `version` worth telling readers about. */
  select(input: { changelog: readonly Entry[]; version: string }): Promise<Entry[]>;
  outline(input: { selected: readonly Entry[]; version: string }): Promise<Section[]>;
  draft(input: DraftInput): Promise<Draft>;
  /** The judgement of fact-check: every claim that no line of the changelog backs. */
  judge(input: { claims: readonly Claim[]; changelog: readonly Entry[] }): Promise<Finding[]>;
}

const headings: Readonly<Record<string, string>> = {
  Added: "What's new",
  Changed: 'What changes for you',
  Fixed: 'Fixed',
};

/**
 * What the scripted writer "knows" beyond the selected entries, as a model would: a release
 * note about scheduled exports mentions the CSV export they build on, which shipped in 2.3.0.
 * True in the full changelog, absent from 2.4.0's entries: fact-check must pass it.
 */
const background = [
  {
    about: /export/i,
    version: '2.3.0',
    source: 'CSV export for invoices and customers.',
    text: 'Scheduled exports build on the CSV export for invoices and customers that arrived in 2.3.0.',
  },
];

/** The claim a first draft makes up, as models do: no changelog line backs it. */
const invented = {
  source: 'Dark mode for the invoice editor.',
  text: 'The invoice editor also gets a dark mode.',
};

/**
 * Deterministic stand-ins for the model steps: same input, same output, offline. The first
 * draft invents one feature, so a run shows fact-check sending a draft back; every later draft
 * keeps the previous one's claims minus those fact-check flagged, and answers new editor notes.
 */
export const scripted: Writer = {
  async select({ changelog, version }) {
    return changelog.filter((e) => e.version === version && e.section !== 'Internal');
  },

  async outline({ selected }) {
    const sections = new Map<string, Entry[]>();
    for (const section of [...Object.keys(headings), ...selected.map((e) => e.section)]) {
      sections.set(section, []);
    }
    for (const entry of selected) sections.get(entry.section)!.push(entry);
    return [...sections]
      .filter(([, entries]) => entries.length > 0)
      .map(([section, entries]) => ({ heading: headings[section] ?? section, entries }));
  },

  async draft({ version, outline, previous, findings, notes }) {
    const flagged = new Set(findings.map((f) => f.claim));
    const claims = previous
      ? previous.claims.filter((c) => !flagged.has(c.text))
      : firstClaims(version, outline);
    const answered = new Set(previous?.addressed ?? []);
    const fixed = previous ? findings.map((f) => `removed: ${f.claim}`) : [];
    const newNotes = notes.filter((n) => !answered.has(n));
    const addressed = [...(previous?.addressed ?? []), ...fixed, ...newNotes];
    const title = `What's new in Ledgerly ${version}`;
    return {
      revision: (previous?.revision ?? 0) + 1,
      title,
      body: render(title, outline, claims, addressed.filter(isNote(notes))),
      claims,
      addressed,
    };
  },

  async judge({ claims, changelog }) {
    return claims
      .filter((c) => !changelog.some((e) => e.version === c.version && e.text === c.source))
      .map((c) => ({
        claim: c.text,
        reason: `no ${c.version} entry in the changelog says "${c.source}"`,
      }));
  },
};

function firstClaims(version: string, outline: readonly Section[]): Claim[] {
  const claims = outline.flatMap(({ heading, entries }) =>
    entries.flatMap((e) => [
      { heading, version: e.version, source: e.text, text: e.text },
      ...background
        .filter((b) => b.about.test(e.text))
        .map((b) => ({ heading, version: b.version, source: b.source, text: b.text })),
    ]),
  );
  const heading = outline[0]?.heading ?? "What's new";
  return [...claims, { heading, version, ...invented }];
}

const isNote = (notes: readonly string[]) => (line: string) => notes.includes(line);

function render(
  title: string,
  outline: readonly Section[],
  claims: readonly Claim[],
  notes: readonly string[],
): string {
  const parts = [`# ${title}`];
  for (const { heading } of outline) {
    const said = claims.filter((c) => c.heading === heading).map((c) => `- ${c.text}`);
    if (said.length > 0) parts.push(`## ${heading}`, said.join('\n'));
  }
  for (const note of notes) parts.push(`_Revised after review: ${note}_`);
  return parts.join('\n\n');
}
