import { z } from 'zod';

/** One line of the changelog: `- text` under `### section` under `## [version]`. */
export const Entry = z.object({
  version: z.string(),
  section: z.string(),
  text: z.string(),
});
export type Entry = z.infer<typeof Entry>;

/** One part of the post: a heading and the entries it covers. */
export const Section = z.object({
  heading: z.string(),
  entries: z.array(Entry),
});
export type Section = z.infer<typeof Section>;

/**
 * One statement the post makes, with the changelog line it rests on (`version` + `source`).
 * Fact-check looks for that line in the whole changelog.
 */
export const Claim = z.object({
  heading: z.string(),
  version: z.string(),
  source: z.string(),
  text: z.string(),
});
export type Claim = z.infer<typeof Claim>;

/** A draft of the post. `addressed` lists the findings and editor notes it answered. */
export const Draft = z.object({
  revision: z.number().int().positive(),
  title: z.string(),
  body: z.string(),
  claims: z.array(Claim),
  addressed: z.array(z.string()),
});
export type Draft = z.infer<typeof Draft>;

/** What the draft step's model writes: a draft without its revision (the graph counts those). */
export const DraftReply = Draft.omit({ revision: true });
export type DraftReply = z.infer<typeof DraftReply>;

/** Whether a line of the changelog is the one a claim cites (same version, same text). */
export function backs(changelog: readonly Entry[], claim: Claim): boolean {
  return changelog.some((e) => e.version === claim.version && e.text === claim.source);
}

/** Fact-check's judgement of one claim of the draft. */
export const Verdict = z.object({
  claim: z.string(),
  backed: z.boolean(),
  reason: z.string(),
});
export type Verdict = z.infer<typeof Verdict>;

/** A claim fact-check could not find in the changelog, and why. */
export const Finding = z.object({
  claim: z.string(),
  reason: z.string(),
});
export type Finding = z.infer<typeof Finding>;

/** What the editor's CLI answer (`approve`, `reject --note`) must look like. */
export const Approval = z.object({ approved: z.boolean(), note: z.string().optional() });
export type Approval = z.infer<typeof Approval>;

/** Where publish put the post. */
export const Published = z.object({ id: z.string(), key: z.string(), url: z.string() });

export const State = z.object({
  /** The release the post is about: the run's only input. */
  version: z.string().regex(/^\d+\.\d+\.\d+$/, 'a version like 2.4.0'),
  /** The whole changelog, every version: what fact-check checks against. */
  changelog: z.array(Entry).default([]),
  /** The entries of `version` worth telling readers about. */
  selected: z.array(Entry).default([]),
  outline: z.array(Section).default([]),
  draft: Draft.nullable().default(null),
  /** Fact-check's findings on the latest draft; non-empty sends the run back to draft. */
  findings: z.array(Finding).default([]),
  /** Every note an editor gave with a rejection, oldest first (appended). */
  notes: z.array(z.string()).default([]),
  approved: z.boolean().default(false),
  published: Published.nullable().default(null),
});
export type State = z.infer<typeof State>;
