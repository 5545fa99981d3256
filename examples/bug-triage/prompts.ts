import { z } from 'zod';
import type { BugReport } from './bugs.js';

/**
 * What the model nodes of bug-triage ask and answer: their output schemas, system prompts and
 * the JSON block their prompts carry. The graph builds prompts with these; the scripted model
 * (and the fake OpenAI-compatible server of the tests) reads the same block back, so every
 * model, scripted or real, answers the same request.
 */

/** What triage concludes from a report: where the bug lives and which files to look at. */
export const Triage = z.object({
  component: z.string(),
  /** Paths relative to `fixtures/`. */
  suspects: z.array(z.string()),
  summary: z.string(),
});
export type Triage = z.output<typeof Triage>;

/** A whole-file change, path relative to `fixtures/`. */
export const FileChange = z.object({ path: z.string(), content: z.string() });
export type FileChange = z.output<typeof FileChange>;

/** What the fixer and the test writer answer: the files they change or add, whole. */
export const Changes = z.object({ files: z.array(FileChange) });
export type Changes = z.output<typeof Changes>;

export const triageSystem =
  'You triage bug reports. Name the component at fault, the suspect source files (paths from the list you are given) and the cause in one line.';
export const fixSystem =
  'You fix bugs. Given a report, the failure of its repro script and the suspect files, return every file you change, whole. Change only what the fix needs.';
export const testsSystem =
  'You write regression tests. Given a report, the failure of its repro script and the suspect files, return new test files: node scripts (.mjs) next to the code they test that exit non-zero when the bug is back.';

/** What the triage prompt carries. */
export interface TriageInput {
  readonly report: Pick<BugReport, 'id' | 'title' | 'text'>;
  /** The files the model may name as suspects. */
  readonly files: readonly string[];
}

/** What the fixer and the test writer are given: the report, the failure, the suspect files. */
export interface FixInput {
  readonly report: Pick<BugReport, 'id' | 'title' | 'text'>;
  readonly component: string;
  /** The repro's error output, without stack frames or machine paths. */
  readonly failure: string;
  /** The suspect files' current content, by path. */
  readonly sources: Readonly<Record<string, string>>;
}

const marker = 'Input (JSON):\n';

/**
 * A prompt: one line of instruction, then the input as a JSON block.
 *
 * @example
 * prompt('Triage this report.', { report, files }) // 'Triage this report.\n\nInput (JSON):\n{...}'
 */
export function prompt(instruction: string, input: TriageInput | FixInput): string {
  return `${instruction}\n\n${marker}${JSON.stringify(input, null, 2)}`;
}

/** The JSON block of a prompt made by {@link prompt}. */
export function inputOf<T extends TriageInput | FixInput>(text: string): T {
  const at = text.indexOf(marker);
  if (at < 0) throw new Error('the prompt has no input block');
  return JSON.parse(text.slice(at + marker.length)) as T;
}

/**
 * A repro's error output as a model should see it: no stack frames, no machine paths, no Node
 * version, so a prompt (and a cassette recorded from it) is the same on every machine.
 *
 * @example
 * failureOf('AssertionError: 0.28 !== 0.29\n    at file:///x/repro.mjs:8:8') // 'AssertionError: 0.28 !== 0.29'
 */
export function failureOf(stderr: string, root: string): string {
  return stderr
    .split('\n')
    .filter(
      (line) =>
        !/^\s+at |^Node\.js v|^node:internal\/|^\s*triggerUncaughtException\(|^\s*\^\s*$/.test(
          line,
        ),
    )
    .join('\n')
    .replaceAll(`file://${root}`, '')
    .replaceAll(root, '')
    .trim();
}
