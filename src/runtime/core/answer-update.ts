import type { ErrorValue } from '../../error/error-value.js';
import { errorValue } from '../../error/error-value.js';
import type { CompiledGraph, RuntimeNode } from '../../graph/compiled.js';
import { type Untracked, untrackedReset } from '../../graph/untracked.js';
import { parseUpdate, refusalError } from './apply-update.js';
import { callUser, userError } from './call-user.js';
import { readView } from './read-view.js';
import { scopedState } from './scope.js';
import type { Activation, FanOut } from './snapshot.js';

type State = Readonly<Record<string, unknown>>;

/** The update a person's answer makes, as parsed fields, or the error it fails the node with. */
export type AnswerUpdate =
  | { readonly ok: true; readonly fields: State | undefined }
  | { readonly ok: false; readonly error: ErrorValue };

/**
 * Turns a person's answer into the fields it sets: the answer is parsed by the node's answer
 * schema, the node's `update` turns it into an update (it sees the node's `reads`), and that is
 * parsed like any node's return. Done once, where the answer is applied, and recorded in the
 * `answered` event: a replay applies the recorded fields and calls none of this again.
 *
 * @example
 * const made = answerUpdate(graph, activation, { approved: true }, state, fanOuts);
 */
export function answerUpdate(
  graph: CompiledGraph,
  activation: Activation,
  answer: unknown,
  state: State,
  fanOuts: Readonly<Record<string, FanOut>>,
): AnswerUpdate {
  const node = graph.nodes.get(activation.node)!;
  const wait = node.wait!;
  const where = { node: node.def.name, activation: activation.id, attempt: activation.attempt };
  const what = `the answer to "${node.def.name}"`;
  const checked = callUser(() => wait.answer.safeParse(answer));
  if (!checked.ok)
    return {
      ok: false,
      error: userError(where, 'ANSWER_INVALID', `${what}'s schema threw`, checked.thrown),
    };
  if (!checked.value.success) {
    const { issues } = checked.value.error;
    const message = `${what} does not match its schema: ${issues[0]?.message}`;
    return {
      ok: false,
      error: errorValue(where, 'ANSWER_INVALID', 'permanent', message, { issues }),
    };
  }
  const parsedAnswer = checked.value.data;
  const view = nodeState(node, activation, state, fanOuts);
  const made = callUser(() => wait.update(parsedAnswer, view));
  if (!made.ok) {
    const error = userError(
      where,
      'NODE_FAILED',
      `turning ${what} into an update threw`,
      made.thrown,
    );
    return { ok: false, error };
  }
  const parsed = parseUpdate(graph, node, made.value);
  if (!parsed.ok) return { ok: false, error: refusalError(where, parsed) };
  return { ok: true, fields: parsed.fields };
}

/**
 * A person node's activation with its wait's question asked under its stable request id
 * (`runId/activationId`), or the error value of a prompt that threw.
 *
 * @example
 * const asked = askWait(node, activation, 'r1', state, fanOuts); // asked.activation.waiting.prompt
 */
export function askWait(
  node: RuntimeNode,
  activation: Activation,
  runId: string,
  state: State,
  fanOuts: Readonly<Record<string, FanOut>>,
  untracked?: Untracked,
):
  | { readonly ok: true; readonly activation: Activation }
  | { readonly ok: false; readonly error: ErrorValue } {
  // The prompt is recorded with the wait, and asked again on replay: untracked fields at their
  // defaults, which is also all a replay has.
  const view = nodeState(node, activation, state, fanOuts, untracked);
  const asked = callUser(() => String(node.wait!.prompt(view)));
  if (!asked.ok) {
    const where = { node: node.def.name, activation: activation.id, attempt: 0 };
    const what = `the prompt of "${node.def.name}" threw`;
    return { ok: false, error: userError(where, 'NODE_FAILED', what, asked.thrown) };
  }
  const requestId = `${runId}/${activation.id}`;
  const where = { node: node.def.name, activation: activation.id, attempt: 0 };
  const keyOf = node.wait!.event?.key;
  const keyed = keyOf === undefined ? undefined : callUser(() => keyOf(view));
  if (keyed !== undefined && (!keyed.ok || typeof keyed.value !== 'string')) {
    const what = `the key() of "${node.def.name}" threw or gave no string`;
    const thrown = keyed.ok ? keyed.value : keyed.thrown;
    return { ok: false, error: userError(where, 'NODE_FAILED', what, thrown) };
  }
  const key = keyed === undefined ? {} : { key: keyed.value as string };
  const deadline = node.wait!.deadline;
  if (deadline === undefined)
    return {
      ok: true,
      activation: { ...activation, waiting: { requestId, prompt: asked.value, ...key } },
    };
  const due = callUser(() => deadline(view));
  const at = due.ok ? (due.value instanceof Date ? due.value.getTime() : due.value) : Number.NaN;
  if (!due.ok || typeof at !== 'number' || !Number.isFinite(at)) {
    const what = `the deadline() of "${node.def.name}" threw or gave no time`;
    return { ok: false, error: userError(where, 'NODE_FAILED', what, due.ok ? at : due.thrown) };
  }
  const waiting = { requestId, prompt: asked.value, deadlineAt: at, ...key };
  return { ok: true, activation: { ...activation, waiting } };
}

/** What a person node's prompt and answer see: its scope's state, limited to its `reads`. */
export function nodeState(
  node: RuntimeNode,
  activation: Activation,
  state: State,
  fanOuts: Readonly<Record<string, FanOut>>,
  untracked?: Untracked,
): State {
  const ref = activation.branch;
  const seen = ref === undefined ? state : fanOuts[ref.fanOut]!.branches[ref.index]!.state;
  const branch = untracked === undefined ? seen : untrackedReset(untracked, seen);
  const scope = scopedState(node, branch);
  return node.reads === undefined ? scope : readView(node.reads, scope, `node "${node.def.name}"`);
}
