import type { ScriptedRequest } from '../../src/model/index.js';

/**
 * The system prompts of the four model steps. The scripted model (scripted.ts) and the tests'
 * fake OpenAI-compatible server tell the steps apart by them; a real model just reads them.
 */
export const systems = {
  select:
    'You pick the changelog entries of one release that readers of a product blog care about. ' +
    'Leave out internal changes. Copy each entry exactly as given (version, section, text).',
  outline:
    'You outline a release blog post: group the selected changelog entries into sections with ' +
    'reader-friendly headings, in the order Added, Changed, Fixed. Copy entries exactly.',
  draft:
    'You write a release blog post in Markdown from its outline. Every statement is a claim ' +
    'that names the changelog line it rests on (version and exact entry text as source). ' +
    'Revising, drop the claims the fact-check flagged and answer every new editor note; list ' +
    'what you addressed ("removed: <claim>" for a dropped claim, each note verbatim).',
  'fact-check':
    "You fact-check a blog post's claims against a product changelog. For every claim say " +
    'whether the changelog line it cites (its version and source) exists and backs it, with ' +
    'a short reason.',
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
