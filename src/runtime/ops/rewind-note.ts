import type { ErrorCode } from '../../error/codes.js';
import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';

/**
 * A rewind's note as an update of its state field, as `waymark rewind --note` and the page's
 * rewind form give it: a list field gets it as one item, any other field the text. A field the
 * graph does not have is refused with `refusal.code`, naming `refusal.option` to fix it.
 * @throws WaymarkError `refusal.code` (`USAGE_INVALID` on the command line, `OPTIONS_INVALID` over HTTP).
 *
 * @example
 * noteUpdate(graph, 'shorter, please', 'notes', { code: 'OPTIONS_INVALID', option: 'noteField' });
 */
export function noteUpdate(
  graph: CompiledGraph,
  note: string,
  field: string,
  refusal: { readonly code: ErrorCode; readonly option: string },
): Record<string, unknown> {
  const schema = graph.fieldSchemas.get(field);
  if (schema === undefined) {
    throw new WaymarkError(
      refusal.code,
      `graph "${graph.name}" has no state field "${field}" for the note; name one with ${refusal.option} (fields: ${graph.def.fields.join(', ')})`,
      { retryable: false, details: { field } },
    );
  }
  return { [field]: schema.safeParse([note]).success ? [note] : note };
}
