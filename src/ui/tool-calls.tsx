import { json } from './format.js';

/** The name of the recorded event an agent tells for each MCP tool call (waymark/model). */
const toolCallEvent = 'mcp.tool-call';

/** One tool call as an agent recorded it: see `ToolCallRecord` in graph/types.ts. */
interface ToolCall {
  readonly tool: string;
  readonly input: unknown;
  readonly output?: unknown;
  readonly error?: { readonly code: string; readonly message: string };
  readonly durationMs: number;
  readonly effect?: string;
}

function isToolCall(data: unknown): data is ToolCall {
  const d = data as Partial<ToolCall> | null;
  return typeof d?.tool === 'string' && typeof d.durationMs === 'number';
}

/**
 * An agent activation's MCP tool calls, in the order it made them: the tool, what it was given,
 * what came back (or the code it was refused or failed with), how long it took, and the
 * idempotency key of an effect tool's call.
 */
export function ToolCalls(props: {
  emitted: readonly { readonly name: string; readonly data: unknown }[];
}) {
  const calls = props.emitted
    .filter((e) => e.name === toolCallEvent)
    .map((e) => e.data)
    .filter(isToolCall);
  if (calls.length === 0) return null;
  return (
    <>
      <h3>Tool calls</h3>
      <table className="tool-calls" data-testid="tool-calls">
        <thead>
          <tr>
            <th>tool</th>
            <th>input</th>
            <th>result</th>
            <th>ms</th>
          </tr>
        </thead>
        <tbody>
          {calls.map((c, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: calls have no id but their order
            <tr key={i} className={c.error === undefined ? 'ok' : 'failed'} data-tool={c.tool}>
              <td className="path">
                {c.tool}
                {c.effect !== undefined && <div className="muted">effect {c.effect}</div>}
              </td>
              <td>
                <pre>{json(c.input)}</pre>
              </td>
              <td>
                {c.error === undefined ? (
                  <pre>{json(c.output)}</pre>
                ) : (
                  <div className="error">
                    <strong>{c.error.code}</strong> {c.error.message}
                  </div>
                )}
              </td>
              <td>{c.durationMs}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
