import { type ScriptedModel, type ScriptedRequest, scriptedModel } from '../../src/model/index.js';
import { type Changes, type FixInput, inputOf, testsSystem } from './prompts.js';
import { answer, messagesOf } from './scripted.js';

/** The system prompt of the investigating agent of the workspace variant. */
export const investigateSystem =
  'You investigate bugs with the repository tools: read the suspect files, post what you found on the report, then answer with a one-line note for the fixers.';

/** What the investigating agent is given. */
export interface InvestigateInput {
  readonly report: FixInput['report'];
  readonly suspects: readonly string[];
  readonly failure: string;
}

/**
 * The scripted model of the workspace variant: the answers of {@link answer} for triage, the fix
 * and the tests, and for the investigating agent a read of the first suspect through the MCP
 * server, a comment on the report, and a note. With `conflicting`, the test writer also "fixes"
 * the suspect line its own way, so the two branches' patches change the same lines.
 *
 * @example
 * const result = await run(bugTriageInRepo({ repo, model: scriptedInRepo({ conflicting: true }) }), input);
 */
export function scriptedInRepo(options: { readonly conflicting?: boolean } = {}): ScriptedModel {
  return scriptedModel(
    (request) => {
      const { system, user } = messagesOf(request);
      if (system === investigateSystem) return investigation(request, user);
      const reply = answer(system, user);
      if (options.conflicting === true && system === testsSystem)
        return { object: conflicting(reply as Changes, inputOf<FixInput>(user)) };
      return { object: reply };
    },
    { modelId: 'bug-triage' },
  );
}

function investigation(request: ScriptedRequest, user: string) {
  const { report, suspects } = inputOf<FixInput & InvestigateInput>(user);
  const results = request.options.prompt.filter((m) => m.role === 'tool').length;
  if (results === 0)
    return { toolCalls: [{ toolName: 'read_file', input: { path: suspects[0] } }] };
  if (results === 1) {
    const body = `Looking at ${suspects[0]} for "${report.title}": a fix and a regression test are on the way.`;
    return { toolCalls: [{ toolName: 'post_comment', input: { body } }] };
  }
  return { object: { note: `read ${suspects[0]}; commented on ${report.id}` } };
}

// The test writer edits the first suspect's first `return` line as well: the line the fix changes.
function conflicting(reply: Changes, input: FixInput): Changes {
  const [path, source] = Object.entries(input.sources)[0] ?? [];
  if (path === undefined || source === undefined) return reply;
  const edited = source.replace(/^\s*return .*$/m, '$& // the tests branch edits this line too');
  return { files: [...reply.files, { path, content: edited }] };
}
