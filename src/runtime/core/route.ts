import { type ErrorValue, errorValue } from '../../error/error-value.js';
import type { RuntimeNode } from '../../graph/compiled.js';
import { END } from '../../graph/end.js';
import { Spelling } from '../../graph/spelling.js';
import { declaredName } from '../../graph/subgraph.js';
import { type Untracked, untrackedReset } from '../../graph/untracked.js';
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
  untracked?: Untracked,
):
  | { readonly ok: true; readonly target: string | undefined }
  | { readonly ok: false; readonly error: ErrorValue } {
  const router = node.router;
  if (router === undefined) return { ok: true, target: node.next };
  const name = node.def.name;
  // The router sees what its node may read and write: it decides on what the node found, and
  // cannot route on a field the node neither read nor wrote. It decides again when the history
  // is replayed, where untracked fields hold their defaults: it sees those live too.
  const access = node.routerReads;
  const seen = scopedState(
    node,
    untracked === undefined ? state : untrackedReset(untracked, state),
  );
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
  // Named as declared: a subgraph node's router runs on its exit, and a child's targets are
  // known under its path, but the user wrote `.route('draft', ...)` with the child's own names.
  const router_ = declaredName(name);
  const prefix = scopePrefix(router_);
  const targets = [...router.targets].map((t) => shown(t, prefix));
  const value = typeof target === 'string' ? target : String(target);
  const meant = typeof target === 'string' ? new Spelling(targets).suggest(target) : undefined;
  const guess = meant === undefined ? '' : ` (did you mean "${meant}"?)`;
  const message = `the router of "${router_}" returned ${JSON.stringify(target) ?? String(target)}${guess}, not one of its declared targets [${targets.join(', ')}]`;
  const error = errorValue(where(activation), 'ROUTE_UNDECLARED', 'permanent', message, {
    router: router_,
    value,
    targets,
    ...(meant !== undefined && { suggestion: meant }),
  });
  return { ok: false, error };
}

/** The path a child's node is known under in the flat graph: `draft/` for `draft/review`. */
function scopePrefix(name: string): string {
  const slash = name.lastIndexOf('/');
  return slash === -1 ? '' : name.slice(0, slash + 1);
}

/** A target as its router declared it: without its subgraph's path, END as END. */
function shown(target: string, prefix: string): string {
  if (target === END || target.endsWith('/__end__')) return 'END';
  return prefix !== '' && target.startsWith(prefix) ? target.slice(prefix.length) : target;
}
