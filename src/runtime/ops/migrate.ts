import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import { callUser, messageOf } from '../core/call-user.js';
import type { RunEvent, Snapshot } from '../core/snapshot.js';

/**
 * The event that upgrades a checkpoint's state to the graph's state schema version, through the
 * declared migrations (user code, each called through the funnel), checked against the schema.
 * @throws WaymarkError `STATE_VERSION_UNKNOWN` (a version with no migration), `MIGRATION_FAILED`
 *   (a migration threw, or its result does not match the schema), `RUN_NOT_RESUMABLE`
 *   (branches are in flight); nothing is recorded.
 *
 * @example
 * const event = migrationEvent(graph, snapshot); // { type: 'migrated', from: 1, to: 2, state }
 */
export function migrationEvent(graph: CompiledGraph, snapshot: Snapshot): RunEvent {
  const from = snapshot.graph.stateVersion;
  checkMigrations(graph, snapshot.runId, from);
  if (Object.keys(snapshot.fanOuts).length > 0) {
    throw refuse(
      'RUN_NOT_RESUMABLE',
      `run "${snapshot.runId}" has branches in flight; its state cannot be migrated from v${from} until they join`,
    );
  }
  let state: Record<string, unknown> = structuredClone(snapshot.state) as Record<string, unknown>;
  for (let version = from; version < graph.stateVersion; version++) {
    const upgrade = graph.migrations.get(version)!;
    const before = state;
    const called = callUser(() => upgrade(before));
    if (!called.ok) {
      throw refuse(
        'MIGRATION_FAILED',
        `the migration from state version ${version} threw: ${messageOf(called.thrown)}`,
      );
    }
    state = called.value;
  }
  const parsed = callUser(() => graph.schema.safeParse(state));
  if (!parsed.ok || !parsed.value.success) {
    const issue = parsed.ok ? parsed.value.error?.issues[0] : undefined;
    const why = parsed.ok
      ? `${issue?.path.join('.')}: ${issue?.message}`
      : messageOf(parsed.thrown);
    throw refuse(
      'MIGRATION_FAILED',
      `the migrated state does not match state version ${graph.stateVersion}: ${why}`,
    );
  }
  return { type: 'migrated', from, to: graph.stateVersion, state: parsed.value.data };
}

/**
 * Refuses a graph that cannot bring state of version `from` up to its own: a newer state than
 * the graph's, or a version on the way with no migration declared.
 * @throws WaymarkError `STATE_VERSION_UNKNOWN`.
 *
 * @example
 * checkMigrations(graph, runId, 1); // throws unless graph declares a migration from 1 (to 2, ...)
 */
export function checkMigrations(graph: CompiledGraph, runId: string, from: number): void {
  if (from > graph.stateVersion) {
    throw refuse(
      'STATE_VERSION_UNKNOWN',
      `run "${runId}" holds state version ${from}, newer than graph "${graph.name}"'s ${graph.stateVersion}`,
    );
  }
  for (let version = from; version < graph.stateVersion; version++) {
    if (!graph.migrations.has(version)) {
      throw refuse(
        'STATE_VERSION_UNKNOWN',
        `graph "${graph.name}" declares no migration from state version ${version}, so run "${runId}" (state version ${from}) cannot continue under it`,
      );
    }
  }
}

function refuse(
  code: 'RUN_NOT_RESUMABLE' | 'STATE_VERSION_UNKNOWN' | 'MIGRATION_FAILED',
  message: string,
): WaymarkError {
  return new WaymarkError(code, message, { retryable: false });
}
