import { isWaymarkError, WaymarkError } from '../../error/waymark-error.js';
import type { ReadAccess } from '../../graph/compiled.js';

type State = Readonly<Record<string, unknown>>;

/**
 * The state as a node that declares `reads` sees it: a frozen object holding only those fields,
 * behind a Proxy that throws `READ_DENIED` the moment another state field is read (a property
 * get, `in`, destructuring, `hasOwnProperty`). Keys, spread and `JSON.stringify` show only the
 * declared fields, since the Proxy's target is the picked object. Anything that is not a state
 * field (`toJSON`, `then`, a symbol, a typo) behaves as on a plain object: serialisers, test
 * matchers and `await` probe such keys, and they are not part of the state a node could leak.
 * Built only for nodes that declare `reads`; every other node gets the state itself.
 *
 * @example
 * const view = readView(node.reads, state, 'node "summarize"');
 * view.notes; // fine
 * view.secret; // throws READ_DENIED: node "summarize" read "secret", which is not among the fields it may read [notes]
 */
export function readView(access: ReadAccess, state: State, who: string): State {
  const picked: Record<string, unknown> = {};
  for (const field of access.fields) {
    if (Object.hasOwn(state, field)) picked[field] = state[field];
  }
  Object.freeze(picked);
  const check = (key: string | symbol) => {
    if (typeof key === 'string' && access.all.has(key) && !access.fields.has(key))
      throw denied(access, key, who);
  };
  return new Proxy(picked, {
    get(target, key, receiver) {
      check(key);
      return Reflect.get(target, key, receiver);
    },
    has(target, key) {
      check(key);
      return Reflect.has(target, key);
    },
    getOwnPropertyDescriptor(target, key) {
      check(key);
      return Reflect.getOwnPropertyDescriptor(target, key);
    },
  });
}

function denied(access: ReadAccess, field: string, who: string): WaymarkError {
  const reads = [...access.fields];
  return new WaymarkError(
    'READ_DENIED',
    `${who} read "${field}", which is not among the fields it may read [${reads.join(', ')}]`,
    { retryable: false, details: { node: access.node, field, reads } },
  );
}

/**
 * The message and details of a `READ_DENIED` thrown from a view, for the places outside a node
 * body that call user code with one (a router, a person node's prompt): the error value they
 * record carries the same code and message as a node body's would.
 *
 * @example
 * try { target = router.fn(view); } catch (e) { const denied = readDenial(e); if (denied) fail(denied.message); }
 */
export function readDenial(
  thrown: unknown,
): { readonly message: string; readonly details: Record<string, unknown> } | undefined {
  if (!isWaymarkError(thrown) || thrown.code !== 'READ_DENIED') return undefined;
  const prefix = 'READ_DENIED: ';
  const message = thrown.message.startsWith(prefix)
    ? thrown.message.slice(prefix.length)
    : thrown.message;
  return { message, details: thrown.details as Record<string, unknown> };
}
