import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Where working copies are made: `$WAYMARK_WORKSPACES`, else `waymark-workspaces` in the
 * system's temp directory. Outside any repository, so a copy never shows in a checkout.
 *
 * @example
 * workspaceRoot({ WAYMARK_WORKSPACES: '/var/lib/waymark/ws' }) // '/var/lib/waymark/ws'
 */
export function workspaceRoot(
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  return env.WAYMARK_WORKSPACES || join(tmpdir(), 'waymark-workspaces');
}

/**
 * The directory of a run's working copies under `root`.
 *
 * @example
 * runDir(root, 'run-1') // '<root>/runs/run-1'
 */
export function runDir(root: string, runId: string): string {
  return join(root, 'runs', safe(runId));
}

/**
 * Where one attempt of an activation works: the same place on every host, so a resume finds
 * (and replaces) what a crashed attempt left.
 *
 * @example
 * workspacePath(root, 'run-1', 'plan:1[0]/fix:1', 1)
 */
export function workspacePath(
  root: string,
  runId: string,
  activationId: string,
  attempt: number,
): string {
  return join(runDir(root, runId), `${safe(activationId)}.${attempt}`);
}

// File names from ids (`plan-fix:1[0]/fix-code:1`): readable, and unique by a short hash.
function safe(id: string): string {
  const plain = id.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80);
  return plain === id
    ? id
    : `${plain}-${createHash('sha256').update(id).digest('hex').slice(0, 8)}`;
}
