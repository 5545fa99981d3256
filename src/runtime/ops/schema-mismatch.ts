import type { z } from 'zod';
import type { ErrorCode } from '../../error/codes.js';
import { WaymarkError } from '../../error/waymark-error.js';

/**
 * The error for a value a schema refused: the first issue in the message, every issue as
 * `{ path, message }` data in `details`.
 *
 * @example
 * throw schemaMismatch('INPUT_INVALID', 'input does not match the state of "claims"', parsed.error);
 */
export function schemaMismatch(code: ErrorCode, what: string, error: z.ZodError): WaymarkError {
  const issues = error.issues.map((i) => ({ path: i.path.map(String), message: i.message }));
  const first = issues[0];
  return new WaymarkError(
    code,
    `${what}: ${first?.path.join('.') || '(root)'}: ${first?.message}`,
    {
      retryable: false,
      details: issues,
    },
  );
}
