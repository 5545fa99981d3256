import { linesOf } from './corpus.js';
import type { Finding, SynthesisInput } from './schema.js';

/**
 * What the audit's model nodes are asked: their system prompts and the JSON block each prompt
 * carries. The graph builds prompts with these; the scripted model (and the fake
 * OpenAI-compatible server of the tests) reads the same block back, so every model, scripted
 * or real, answers the same request.
 */

export const auditorSystem = [
  'You audit source code for resilience defects: network calls without a timeout, retry loops without a cap, swallowed errors, unbounded queues or buffers.',
  'Report each defect as a finding: the file as given, the line number, the claim (the kind of defect and its consequence), and as evidence the text of that line exactly as written, without its number.',
  'Anything else you want to say goes in remarks, as plain sentences; remarks are kept but never verified or reported.',
].join(' ');

export const verifierSystem = [
  'You verify one claim about a source file. Read the cited line and the code around it.',
  'Answer supported when the defect is there, refuted when the code guards against it, unverified when the file does not let you tell; give the reason in one sentence.',
].join(' ');

export const writerSystem = [
  'You write the report of a resilience audit from the structured results you are given, and nothing else.',
  'Cite a confirmed defect only as [its id], only the ids in gated; list the coverage gaps as files not audited (never as clean files); state the tallies and the verifier canary.',
].join(' ');

/** What the auditor is shown: one file, its lines numbered. */
export interface AuditorInput {
  readonly file: string;
  readonly source: string;
}

/** What the verifier is shown: the claim (never whether it is the canary) and the file. */
export interface VerifierInput {
  readonly finding: Finding;
  readonly source: string;
}

const marker = 'Input (JSON):\n';

/**
 * A prompt: one line of instruction, then the input as a JSON block.
 *
 * @example
 * prompt('Audit this file.', { file, source: numbered(text) })
 */
export function prompt(
  instruction: string,
  input: AuditorInput | VerifierInput | SynthesisInput,
): string {
  return `${instruction}\n\n${marker}${JSON.stringify(input, null, 2)}`;
}

/** The JSON block of a prompt made by {@link prompt}. */
export function inputOf<T extends AuditorInput | VerifierInput | SynthesisInput>(text: string): T {
  const at = text.indexOf(marker);
  if (at < 0) throw new Error('the prompt has no input block');
  return JSON.parse(text.slice(at + marker.length)) as T;
}

/**
 * A source with its line numbers, the way a model can cite them.
 *
 * @example
 * numbered('a\nb\n') // '1| a\n2| b'
 */
export function numbered(source: string): string {
  return linesOf(source)
    .map((line, i) => `${i + 1}| ${line}`)
    .join('\n');
}

/** The source text of a {@link numbered} listing. */
export function unnumbered(listing: string): string {
  return listing
    .split('\n')
    .map((line) => line.replace(/^\d+\| /, ''))
    .join('\n');
}
