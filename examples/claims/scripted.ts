import { type ScriptedModel, scriptedModel } from '../../src/model/index.js';
import { dataOf, messagesOf, type Step, stepOf } from './prompts.js';

/** A source as rank orders them. */
export interface Ranked {
  readonly id: string;
  readonly text: string;
  readonly score: number;
}

/** One cited statement of an answer. */
export interface Statement {
  readonly text: string;
  readonly source: string;
}

/**
 * What the scripted model answers each model step with, from the step's input: deterministic
 * stand-ins, same input, same output, offline. The first answer paraphrases its best source, as
 * a model would, so verify sends the run back to plan once; the next answer quotes.
 */
export const steps = {
  /** The claim itself first; a second round searches for what could not be verified. */
  plan({ claim, unverified }: { claim: string; unverified: readonly string[] }) {
    return { queries: unverified.length > 0 ? [...unverified] : [claim] };
  },

  /** The first sentence of each of the two best sources; the first answer paraphrases the best. */
  write({ ranked, previous }: { ranked: readonly Ranked[]; previous: readonly Statement[] }): {
    statements: Statement[];
  } {
    const quote = (text: string) => text.split('. ')[0] ?? text;
    const paraphrase = previous.length === 0;
    return {
      statements: ranked.slice(0, 2).map((r, i) => ({
        text: paraphrase && i === 0 ? 'Tea arrived in Europe around 1600' : quote(r.text),
        source: r.id,
      })),
    };
  },
} satisfies Record<Step, (input: never) => unknown>;

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
 * The model plan and write use unless the run names one (`--model`): an AI SDK model that
 * answers every call with {@link respond}, offline and without a key. Named `scripted:claims`.
 */
export function scriptedResearcher(): ScriptedModel {
  return scriptedModel(
    (request) => {
      const { system, user } = messagesOf(request);
      return { object: respond(system, user) };
    },
    { modelId: 'claims' },
  );
}
