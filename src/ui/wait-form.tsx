import { useMemo, useState } from 'react';
import { ApiError, post, runPath } from './api.js';
import { when } from './format.js';
import { FieldInput } from './schema-form.js';
import {
  answerOf,
  type FormValue,
  formOf,
  initialValue,
  missingChoices,
  rejects,
} from './schema-form-model.js';
import type { Wait } from './types.js';

/**
 * An open wait with a form made from its answer schema. Answering goes through the API exactly
 * like `waymark answer`: the server checks the answer against the schema and records it once, or
 * refuses it (shown here) and records nothing; then the run moves on, live on the page. Nothing
 * is chosen for the person: a yes-no question or a choice left untouched keeps the form from
 * being sent, and a "no" to an approval is sent only once confirmed (an answer is never taken
 * back).
 */
export function WaitForm({
  runId,
  wait,
  onAnswered,
}: {
  runId: string;
  wait: Wait;
  onAnswered?: () => void;
}) {
  const field = useMemo(() => formOf(wait.request.schema), [wait.request.schema]);
  const [value, setValue] = useState<FormValue>(() => initialValue(field));
  const [by, setBy] = useState('ui');
  const [error, setError] = useState<ApiError>();
  const [missing, setMissing] = useState<readonly string[]>([]);
  // The rejection waiting for its confirmation; any change to the form asks again.
  const [confirming, setConfirming] = useState(false);
  const [sending, setSending] = useState(false);
  const [done, setDone] = useState(false);
  const change = (next: FormValue) => {
    setValue(next);
    setConfirming(false);
    setMissing((m) => (m.length === 0 ? m : missingChoices(field, next)));
  };
  return (
    <form
      className="wait"
      data-request={wait.requestId}
      onSubmit={async (e) => {
        e.preventDefault();
        setError(undefined);
        const unchosen = missingChoices(field, value);
        setMissing(unchosen);
        if (unchosen.length > 0) return;
        const answer = answerOf(field, value);
        if (rejects(field, answer) && !confirming) {
          setConfirming(true);
          return;
        }
        setSending(true);
        try {
          await post(`${runPath(runId)}/waits/${encodeURIComponent(wait.requestId)}/answer`, {
            answer,
            by,
          });
          setConfirming(false);
          setDone(true);
          onAnswered?.();
        } catch (err) {
          setError(err instanceof ApiError ? err : new ApiError('INTERNAL', String(err), 0, null));
        } finally {
          setSending(false);
        }
      }}
    >
      <div className="wait-head">
        <strong>{wait.node}</strong> asks, since {when(wait.openedAt)}:
      </div>
      <p className="prompt">{wait.request.prompt}</p>
      {wait.request.event !== undefined && (
        <p className="muted" data-testid="event-wait">
          waits for event <code>{wait.request.event.name}</code>
          {wait.request.event.key !== undefined && (
            <>
              {' '}
              with key <code>{wait.request.event.key}</code>
            </>
          )}
          : <code>waymark signal</code> or{' '}
          <code>POST /runs/:id/signals/{wait.request.event.name}</code>
        </p>
      )}
      <FieldInput name="answer" field={field} value={value} onChange={change} />
      <div className="wait-foot">
        <label>
          answered by <input aria-label="by" value={by} onChange={(e) => setBy(e.target.value)} />
        </label>
        {confirming ? (
          <div className="confirm" role="alert">
            <span>
              This answer <strong>rejects</strong>: the run goes on as rejected, and an answer
              cannot be taken back.
            </span>
            <button type="button" onClick={() => setConfirming(false)}>
              Back
            </button>
            <button type="submit" className="danger" disabled={sending || done}>
              {sending ? 'Sending…' : 'Reject'}
            </button>
          </div>
        ) : (
          <button type="submit" className="primary" disabled={sending || done}>
            {done ? 'Answered' : sending ? 'Sending…' : 'Answer'}
          </button>
        )}
      </div>
      {missing.length > 0 && (
        <div className="error" role="alert">
          Choose an answer for <strong>{missing.join(', ')}</strong> first: nothing is chosen for
          you.
        </div>
      )}
      {error !== undefined && (
        <div className="error" role="alert">
          <strong>{error.code}</strong>: {error.message}
          {error.details !== null && error.details !== undefined && (
            <pre>{JSON.stringify(error.details, null, 2)}</pre>
          )}
        </div>
      )}
    </form>
  );
}
