import { useMemo, useState } from 'react';
import { ApiError, post, runPath } from './api.js';
import { when } from './format.js';
import { FieldInput } from './schema-form.js';
import { answerOf, type FormValue, formOf, initialValue } from './schema-form-model.js';
import type { Wait } from './types.js';

/**
 * An open wait with a form made from its answer schema. Answering goes through the API exactly
 * like `waymark answer`: the server checks the answer against the schema and records it once, or
 * refuses it (shown here) and records nothing; then the run moves on, live on the page.
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
  const [sending, setSending] = useState(false);
  const [done, setDone] = useState(false);
  return (
    <form
      className="wait"
      data-request={wait.requestId}
      onSubmit={async (e) => {
        e.preventDefault();
        setSending(true);
        setError(undefined);
        try {
          await post(`${runPath(runId)}/waits/${encodeURIComponent(wait.requestId)}/answer`, {
            answer: answerOf(field, value),
            by,
          });
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
      <FieldInput name="answer" field={field} value={value} onChange={setValue} />
      <div className="wait-foot">
        <label>
          answered by <input aria-label="by" value={by} onChange={(e) => setBy(e.target.value)} />
        </label>
        <button type="submit" className="primary" disabled={sending || done}>
          {done ? 'Answered' : sending ? 'Sending…' : 'Answer'}
        </button>
      </div>
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
