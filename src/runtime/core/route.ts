import { type ErrorValue, errorValue } from '../../error/error-value.js';
import type { RuntimeNode } from '../../graph/compiled.js';
import { where } from './activations.js';
import { callUser, userError } from './call-user.js';
import { readView } from './read-view.js';
import { scopedState } from './scope.js';
import type { Activation, Snapshot } from './snapshot.js';

/**
 * Where a completed activation goes next: its router's choice (one of the targets it declared),
 * or its static edge. A router that throws, reads a field it may not, or returns a target it did
 * not declare gives the error value that stops the run instead.
 *
 * @example
 * const routed = routeOf(node, activation, state); // { ok: true, target: 'publish' }
 */
export function routeOf(
  node: RuntimeNode,
  activation: Activation,
  state: Snapshot['state'],
):
  | { readonly ok: true; readonly target: string | undefined }
  | { readonly ok: false; readonly error: ErrorValue } {
  const router = node.router;
  if (router === undefined) return { ok: true, target: node.next };
  const name = node.def.name;
  // The router sees what its node may read and write: it decides on what the node found, and
  // cannot route on a field the node neither read nor wrote.
  const access = node.routerReads;
  const seen = scopedState(node, state);
  const chosen = callUser(() =>
    router.fn(access === undefined ? seen : readView(access, seen, `the router of "${name}"`)),
  );
  if (!chosen.ok) {
    const what = `the router of "${name}" threw`;
    const error = userError(where(activation), 'ROUTER_FAILED', what, chosen.thrown, {
      router: name,
    });
    return { ok: false, error };
  }
  const target = chosen.value;
  if (typeof target === 'string' && router.targets.has(target)) return { ok: true, target };
  const declared = [...router.targets].join(', ');
  const message = `the router of "${name}" returned ${JSON.stringify(target) ?? String(target)}, not one of its declared targets [${declared}]`;
  const error = errorValue(where(activation), 'ROUTE_UNDECLARED', 'permanent', message, {
    router: name,
    value: String(target),
    targets: [...router.targets],
  });
  return { ok: false, error };
}
