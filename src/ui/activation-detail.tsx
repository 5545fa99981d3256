import { useEffect, useState } from 'react';
import { get, runPath } from './api.js';
import { duration, json, when } from './format.js';
import type { ActivationView } from './run-model.js';
import { activationLabel } from './run-model.js';
import { type Change, diffStates } from './state-diff.js';
import { ToolCalls } from './tool-calls.js';
import type { EffectEntry, HistoryStep, NodeDef, QuarantineEntry } from './types.js';

/** The state after a step (0: the input), read from the API once per step shown. */
const steps = new Map<string, Promise<HistoryStep>>();
function stepOf(runId: string, seq: number): Promise<HistoryStep> {
  const key = `${runId}@${seq}`;
  let p = steps.get(key);
  if (p === undefined) {
    p = get<HistoryStep>(`${runPath(runId)}/steps/${seq}`);
    p.catch(() => steps.delete(key));
    steps.set(key, p);
  }
  return p;
}

/**
 * One activation: its input view (the fields it reads, from the state it was scheduled on, and
 * its item), its update, the state after it as a diff against the step before, each attempt
 * with its error and stack, the effects it recorded, what it emitted, and what its checks
 * quarantined.
 */
export function ActivationDetail(props: {
  runId: string;
  activation: ActivationView;
  node: NodeDef | undefined;
  /** For a map fan-out's branch node: the state field its items come from. */
  mapOver?: string | undefined;
  quarantine: readonly QuarantineEntry[];
}) {
  const { runId, activation: a, node } = props;
  const [input, setInput] = useState<Record<string, unknown>>();
  const [changes, setChanges] = useState<Change[]>();
  useEffect(() => {
    let gone = false;
    setInput(undefined);
    setChanges(undefined);
    void stepOf(runId, a.scheduledSeq).then(
      (s) => {
        if (gone) return;
        const reads = node?.reads;
        const view =
          reads === undefined
            ? { ...s.state }
            : Object.fromEntries(reads.map((f) => [f, s.state[f]]));
        // A map branch also sees its item (`ctx.item`): the entry of the list it was made for.
        const list = props.mapOver === undefined ? undefined : s.state[props.mapOver];
        setInput(
          Array.isArray(list) && a.branch !== undefined
            ? { ...view, 'ctx.item': list[a.branch.index], 'ctx.index': a.branch.index }
            : view,
        );
      },
      () => {},
    );
    if (a.endedSeq !== undefined) {
      const seq = a.endedSeq;
      void Promise.all([stepOf(runId, seq - 1), stepOf(runId, seq)]).then(
        ([before, after]) => {
          if (!gone) setChanges(diffStates(before.state, after.state));
        },
        () => {},
      );
    }
    return () => {
      gone = true;
    };
  }, [runId, a.scheduledSeq, a.endedSeq, node, props.mapOver, a.branch]);
  const quarantined = props.quarantine.filter((q) => q.activation === a.id);
  const [effects, setEffects] = useState<readonly EffectEntry[]>();
  useEffect(() => {
    let gone = false;
    setEffects(undefined);
    // An effect's key is runId/activation/name: this activation's are those under its prefix.
    const prefix = `${runId}/${a.id}/`;
    void get<{ effects: EffectEntry[] }>(`${runPath(runId)}/effects`).then(
      (r) => {
        if (!gone) setEffects(r.effects.filter((e) => e.key.startsWith(prefix)));
      },
      () => {},
    );
    return () => {
      gone = true;
    };
  }, [runId, a.id]);

  return (
    <div className="detail" data-testid="activation-detail">
      <h2>
        {activationLabel(a)} <span className={`status ${a.status}`}>{a.status}</span>
      </h2>
      <p className="muted">
        {a.id}
        {a.parent !== null && ` · after ${a.parent}`}
        {a.branch !== undefined && ` · branch ${a.branch.index} of fan-out ${a.branch.fanOut}`}
        {a.reused && ' · reused from an earlier run'}
      </p>
      {a.sleepsUntil !== undefined && (
        <p className="sleeping" data-testid="sleeps-until">
          {a.rateLimited === undefined
            ? 'sleeping until '
            : `queued for rate limit "${a.rateLimited}" until `}
          {when(a.sleepsUntil)}: a worker or waymark serve wakes the run then
        </p>
      )}
      <h3>Attempts</h3>
      <ol className="attempts">
        {a.attempts.map((at) => (
          <li key={at.attempt} className={at.status}>
            attempt {at.attempt}: {at.status}
            {at.startedAt !== undefined && ` at ${when(at.startedAt)}, ${duration(at.durationMs)}`}
            {at.notBefore !== undefined && ` · backoff until ${when(at.notBefore)}`}
            {at.heartbeat !== undefined && (
              <span className="heartbeat" data-testid="heartbeat">
                {` · last heartbeat ${when(at.heartbeat.at)}`}
                {at.heartbeat.details !== undefined && `: ${JSON.stringify(at.heartbeat.details)}`}
              </span>
            )}
            {at.usage !== undefined &&
              ` · ${at.usage.inputTokens ?? 0} in / ${at.usage.outputTokens ?? 0} out tokens${at.usage.costUsd ? `, $${at.usage.costUsd.toFixed(4)}` : ''}${at.usage.model ? ` (${at.usage.model})` : ''}`}
            {at.error !== undefined && (
              <div className="error">
                <strong>{at.error.code}</strong> {at.error.message}
                {'stack' in at.error && at.error.stack !== undefined && <pre>{at.error.stack}</pre>}
              </div>
            )}
          </li>
        ))}
      </ol>
      <h3>
        Input view{' '}
        {node?.reads === undefined ? '(the whole state)' : `(reads ${node.reads.join(', ')})`}
      </h3>
      <pre className="json">{input === undefined ? '…' : json(input)}</pre>
      <h3>Update</h3>
      <pre className="json">{a.update === undefined ? '(none yet)' : json(a.update)}</pre>
      <h3>State after it, against the step before</h3>
      {a.status === 'failed' ? (
        <p className="muted">It failed: nothing it returned was applied.</p>
      ) : a.endedSeq === undefined ? (
        <p className="muted">It has not completed.</p>
      ) : changes === undefined ? (
        <p className="muted">…</p>
      ) : changes.length === 0 ? (
        <p className="muted">No change.</p>
      ) : (
        <table className="diff">
          <tbody>
            {changes.map((c) => (
              <tr key={c.path} className={c.kind}>
                <td className="path">{c.path}</td>
                <td>{c.kind === 'added' ? '' : <pre>{json(c.before)}</pre>}</td>
                <td>{c.kind === 'removed' ? '' : <pre>{json(c.after)}</pre>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {effects !== undefined && effects.length > 0 ? (
        <>
          <h3>Effects</h3>
          <table className="effects" data-testid="effects">
            <tbody>
              {effects.map((e) => (
                <tr key={e.key}>
                  <td className="path">{e.key.slice(`${runId}/${a.id}/`.length)}</td>
                  <td>{when(e.at)}</td>
                  <td>
                    <pre>{json(e.result)}</pre>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <p className="muted">
            Recorded in the effect ledger under their idempotency keys: done once, also across
            retries and resumes.
          </p>
        </>
      ) : (
        node?.kind === 'effect' && (
          <p className="muted">
            An effect node: its actions are recorded in the effect ledger under their idempotency
            keys and done once, also across retries and resumes. It recorded none.
          </p>
        )
      )}
      <ToolCalls emitted={a.emitted} />
      {a.emitted.length > 0 && (
        <>
          <h3>Emitted</h3>
          <pre className="json">{json(a.emitted)}</pre>
        </>
      )}
      {quarantined.length > 0 && (
        <>
          <h3>Quarantined</h3>
          {quarantined.map((q, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: entries have no id but their order
            <div key={i} className="quarantine">
              <div>{q.reasons.join(', ')}</div>
              <pre className="json">{json(q.output)}</pre>
            </div>
          ))}
        </>
      )}
    </div>
  );
}
