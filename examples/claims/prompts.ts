import type { ScriptedRequest } from '../../src/model/index.js';

/**
 * The system prompts of the two model steps. The scripted model (scripted.ts) and the tests'
 * fake OpenAI-compatible server tell the steps apart by them; a real model just reads them.
 */
export const systems = {
  plan:
    'You plan searches that check a claim: a few short search queries. When some statements ' +
    'of the last answer could not be verified, search for those.',
  write:
    'You answer a claim from ranked sources: one statement from each of the two best sources, ' +
    'citing it by its id. Quote a sentence of the source verbatim; a paraphrase fails the ' +
    'citation check. When statements were unverified before, quote instead of paraphrasing.',
} as const;

/** The name of a model step, as in the graph. */
export type Step = keyof typeof systems;

/**
 * A user prompt: the instruction, then the step's input as a JSON block (data a model reads
 * as well as prose, and the scripted model reads back with {@link dataOf}).
 */
export function withData(instruction: string, data: unknown): string {
  return `${instruction}\n\n\`\`\`json\n${JSON.stringify(data, null, 2)}\n\`\`\``;
}

/** The JSON block at the end of a user prompt made by {@link withData}. */
export function dataOf(prompt: string): unknown {
  const block = /```json\n([\s\S]*)\n```\s*$/.exec(prompt);
  if (!block) throw new Error('the prompt has no JSON block at its end');
  return JSON.parse(block[1]!);
}

/** The step a system prompt belongs to. */
export function stepOf(system: string): Step {
  const step = (Object.keys(systems) as Step[]).find((s) => systems[s] === system);
  if (!step) throw new Error(`no model step has the system prompt "${system.slice(0, 40)}..."`);
  return step;
}

/** The system prompt and the first user message of a scripted model's request. */
export function messagesOf(request: ScriptedRequest): { system: string; user: string } {
  let system = '';
  let user: string | undefined;
  for (const message of request.options.prompt) {
    if (message.role === 'system') system = message.content;
    else if (message.role === 'user' && user === undefined)
      user = message.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
  }
  return { system, user: user ?? '' };
}
