import { type ErrorValue, errorValue } from '../../error/error-value.js';
import type { CompiledGraph, RuntimeNode } from '../../graph/compiled.js';
import {
  type ParentCommand,
  parentCommandOf,
  parentTag,
  parentTarget,
  type SentToParent,
} from '../../graph/parent-goto.js';
import { type Parsed, parseUpdate } from './apply-update.js';
import type { Activation, FanOut } from './snapshot.js';

const cleared = Object.freeze({ set: null });

/**
 * What a node returned, parsed where it ran: a `parent()` command becomes its recorded form
 * (the parent's update parsed by the parent's schemas and the subgraph's `writes`, as the
 * subgraph's exit parses its output mapping, with the child's slot cleared, and the target
 * under its flat name); anything else is {@link parseUpdate}'s. A command from a node that runs
 * in no subgraph, or to a target its `parentGoto` does not declare, is refused
 * `ROUTE_UNDECLARED`, as a router's undeclared target is.
 *
 * @example
 * parseReturn(graph, node, parent({ goto: 'publish', update: { verdict: 'ok' } }));
 */
export function parseReturn(graph: CompiledGraph, node: RuntimeNode, update: unknown): Parsed {
  const command = parentCommandOf(update);
  return command === undefined ? parseUpdate(graph, node, update) : parseSent(graph, node, command);
}

function parseSent(graph: CompiledGraph, node: RuntimeNode, command: ParentCommand): Parsed {
  const name = node.def.name;
  if (node.scope === undefined)
    return undeclared(`node "${name}" returned parent(), but it runs in no subgraph`);
  const { goto } = command;
  const declared = node.def.parentGoto ?? [];
  if (goto !== undefined && !declared.includes(goto))
    return undeclared(
      `node "${name}" sent its parent to "${goto}", which its parentGoto [${declared.join(', ')}] does not declare`,
      { value: goto, parentGoto: declared },
    );
  const target = parentTarget(name, goto);
  const exit = graph.nodes.get(target.exit)!;
  const raw = { ...(command.update ?? {}), [exit.inline!.slot]: cleared };
  const parsed = parseUpdate(graph, exit, raw);
  if (!parsed.ok) return { ...parsed, message: `parent() of node "${name}": ${parsed.message}` };
  const sent: SentToParent = {
    [parentTag]: 'parent',
    exit: target.exit,
    ...(target.goto !== undefined && { goto: target.goto }),
    update: parsed.fields,
  };
  return { ok: true, fields: Object.freeze(sent) };
}

function undeclared(message: string, details?: unknown): Parsed {
  return {
    ok: false,
    code: 'ROUTE_UNDECLARED',
    message,
    ...(details !== undefined && { details }),
  };
}

/**
 * Refuses, as an error value, a parent goto from inside a fan-out the child itself opened: its
 * sibling branches and its join are the child's, which the goto would leave behind.
 */
export function sentFromBranch(
  activation: Activation,
  fanOuts: Readonly<Record<string, FanOut>>,
): ErrorValue | undefined {
  const { branch, scope } = activation;
  if (branch === undefined || scope === undefined) return undefined;
  const entered = scope[scope.length - 1]!;
  if (fanOuts[branch.fanOut]?.scope?.includes(entered) !== true) return undefined;
  const where = { node: activation.node, activation: activation.id, attempt: activation.attempt };
  const message = `node "${activation.node}" returned parent() from a branch of a fan-out its subgraph opened; send from outside the fan-out`;
  return errorValue(where, 'ROUTE_UNDECLARED', 'permanent', message);
}
