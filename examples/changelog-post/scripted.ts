import { type ScriptedModel, scriptedModel } from '../../src/model/index.js';
import { dataOf, messagesOf, type Step, stepOf } from './prompts.js';
import {
  backs,
  type Claim,
  type Draft,
  type DraftReply,
  type Entry,
  type Finding,
  type Section,
  type Verdict,
} from './schema.js';

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
 * What the scripted model answers each model step with, from the step's input: deterministic
 * stand-ins, same input, same output, offline. The first draft invents one feature, so a run
 * shows fact-check sending a draft back; every later draft keeps the previous one's claims
 * minus those fact-check flagged, and answers new editor notes. Each returns the step's output
 * (the zod schemas in schema.ts), as a model's structured output.
 */
export const steps = {
  select({ changelog, version }: { changelog: readonly Entry[]; version: string }) {
    return { selected: changelog.filter((e) => e.version === version && e.section !== 'Internal') };
  },

  outline({ selected }: { selected: readonly Entry[] }): { outline: Section[] } {
    const sections = new Map<string, Entry[]>();
    for (const section of [...Object.keys(headings), ...selected.map((e) => e.section)]) {
      sections.set(section, []);
    }
    for (const entry of selected) sections.get(entry.section)!.push(entry);
    return {
      outline: [...sections]
        .filter(([, entries]) => entries.length > 0)
        .map(([section, entries]) => ({ heading: headings[section] ?? section, entries })),
    };
  },

  draft({ version, outline, previous, findings, notes }: DraftInput): DraftReply {
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
      title,
      body: render(title, outline, claims, addressed.filter(isNote(notes))),
      claims,
      addressed,
    };
  },

  /** A claim is backed when the changelog has the line it cites. */
  'fact-check'({ claims, changelog }: { claims: readonly Claim[]; changelog: readonly Entry[] }): {
    verdicts: Verdict[];
  } {
    return {
      verdicts: claims.map((c) =>
        backs(changelog, c)
          ? { claim: c.text, backed: true, reason: `the ${c.version} entry "${c.source}"` }
          : {
              claim: c.text,
              backed: false,
              reason: `no ${c.version} entry in the changelog says "${c.source}"`,
            },
      ),
    };
  },
} satisfies Record<Step, (input: never) => unknown>;

/**
 * What each step's call reports spending: the numbers of a real model writing this post, so the
 * recorded usage (and the plans and expected cost read from it, docs/cost.md) are a real
 * post's. Weighted by price (an output token costs four input tokens at gpt-4o-mini's prices):
 * select 6k, outline 7k, draft 14k, fact-check 12k, so 39k a post when fact-check passes the
 * first draft; a fact-check failure re-pays 12k, an editor's rejection 26k (draft, fact-check).
 */
export const stepUsage: Readonly<
  Record<Step, { readonly inputTokens: number; readonly outputTokens: number }>
> = {
  select: { inputTokens: 4_000, outputTokens: 500 },
  outline: { inputTokens: 3_000, outputTokens: 1_000 },
  draft: { inputTokens: 6_000, outputTokens: 2_000 },
  'fact-check': { inputTokens: 8_000, outputTokens: 1_000 },
};

/**
 * The answer to one model call, from its system prompt (which step) and its user prompt (the
 * step's input, as JSON). The scripted model answers with it; so does the tests' fake
 * OpenAI-compatible server, so a recorded run takes the scripted run's path.
 */
export function respond(system: string, user: string): unknown {
  const step = steps[stepOf(system)] as (input: unknown) => unknown;
  return step(dataOf(user));
}

/**
 * The model the graph's model nodes use unless the run names one (`--model`): an AI SDK model
 * that answers every call with {@link respond}, offline and without a key. Named
 * `scripted:changelog-post` in usage and the trace.
 */
export function scriptedWriter(): ScriptedModel {
  return scriptedModel(
    (request) => {
      const { system, user } = messagesOf(request);
      return { object: respond(system, user), usage: stepUsage[stepOf(system)] };
    },
    { modelId: 'changelog-post' },
  );
}

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
