import { useState } from 'react';
import { ApiError, del, post, runPath } from './api.js';
import { PlanLine } from './plan-line.js';
import { go } from './route.js';
import type { GraphDef, RunStatus } from './types.js';

/** The statuses a run ends with: only such a run is offered Delete. */
const finished = new Set<RunStatus | undefined>(['succeeded', 'failed', 'cancelled', 'timed_out']);

/**
 * Delete (a finished run, asked twice, with all it owns: `DELETE /runs/:id`), cancel, resume,
 * and rewind-from-here (a new run from the checkpoint before a node, with a note
 * for its state, like `waymark rewind --to <node> --note`). The refusal of the API is shown as
 * it came: a run that cannot be resumed says why.
 */
export function RunActions(props: {
  runId: string;
  status: RunStatus | undefined;
  def: GraphDef | undefined;
  node: string | undefined;
}) {
  const { runId, status, def } = props;
  const [message, setMessage] = useState<string>();
  const [rewinding, setRewinding] = useState(false);
  const [to, setTo] = useState<string>();
  const [note, setNote] = useState('');
  const [deleting, setDeleting] = useState(false);
  const target = to ?? props.node ?? def?.nodes[0]?.name ?? '';
  const act = async (what: string, body: unknown = {}) => {
    setMessage(undefined);
    try {
      return await post<{ runId: string; status: string }>(`${runPath(runId)}/${what}`, body);
    } catch (e) {
      setMessage(e instanceof ApiError ? `${e.code}: ${e.message}` : String(e));
      return undefined;
    }
  };
  const open = status === 'running' || status === 'waiting';
  const noteField = def?.fields.includes('notes')
    ? 'notes'
    : def?.fields.includes('note')
      ? 'note'
      : undefined;
  return (
    <div className="actions">
      <button
        type="button"
        disabled={!open}
        onClick={() => void act('cancel', { reason: 'cancelled from the web page' })}
      >
        Cancel
      </button>
      <button
        type="button"
        disabled={status === 'succeeded' || status === 'cancelled'}
        onClick={() => void act('resume')}
      >
        Resume
      </button>
      <button type="button" onClick={() => setRewinding((r) => !r)} aria-expanded={rewinding}>
        Rewind…
      </button>
      {rewinding && (
        <form
          className="rewind"
          onSubmit={async (e) => {
            e.preventDefault();
            const body = {
              to: target,
              ...(note.trim() !== '' &&
                noteField !== undefined && { note: note.trim(), noteField }),
            };
            const moved = await act('rewind', body);
            if (moved !== undefined) go(`/runs/${encodeURIComponent(moved.runId)}`);
          }}
        >
          <label>
            from node
            <select aria-label="rewind to" value={target} onChange={(e) => setTo(e.target.value)}>
              {def?.nodes.map((n) => (
                <option key={n.name}>{n.name}</option>
              ))}
            </select>
          </label>
          <label>
            note{' '}
            {noteField === undefined ? '(no notes field in this state)' : `(into "${noteField}")`}
            <textarea
              aria-label="rewind note"
              value={note}
              disabled={noteField === undefined}
              onChange={(e) => setNote(e.target.value)}
              rows={2}
            />
          </label>
          <PlanLine
            runId={runId}
            kind="rewind"
            to={target}
            {...(noteField !== undefined && { note: note.trim(), noteField })}
          />
          <button type="submit" className="primary">
            Rewind as a new run
          </button>
        </form>
      )}
      {finished.has(status) && (
        <button type="button" onClick={() => setDeleting((d) => !d)} aria-expanded={deleting}>
          Delete…
        </button>
      )}
      {deleting && finished.has(status) && (
        <p className="delete">
          Deletes this run, its history, waits and effects for good.{' '}
          <button
            type="button"
            className="danger"
            onClick={async () => {
              setMessage(undefined);
              try {
                await del(runPath(runId));
                go('/runs');
              } catch (e) {
                setMessage(e instanceof ApiError ? `${e.code}: ${e.message}` : String(e));
              }
            }}
          >
            Delete for good
          </button>
        </p>
      )}
      {resumable(status) && <PlanLine runId={runId} kind="resume" />}
      {message !== undefined && (
        <p className="error" role="alert">
          {message}
        </p>
      )}
    </div>
  );
}

/** Whether the page offers a price for Resume: a run that stopped short of its end. */
function resumable(status: RunStatus | undefined): boolean {
  return status === 'failed' || status === 'timed_out' || status === 'waiting';
}
