import type { JsonSchema } from './types.js';

/** A field of a form made from a JSON Schema. */
export type FormField =
  | { readonly kind: 'string'; readonly multiline: boolean }
  | { readonly kind: 'number'; readonly integer: boolean }
  | { readonly kind: 'boolean' }
  | { readonly kind: 'enum'; readonly options: readonly unknown[] }
  | { readonly kind: 'strings' }
  | {
      readonly kind: 'object';
      readonly fields: readonly {
        readonly name: string;
        /** The answer must have it: listed as required, with no default to fall back on. */
        readonly required: boolean;
        readonly field: FormField;
        readonly description?: string;
        /** What the schema gives it when the answer leaves it out: shown chosen at first. */
        readonly default?: unknown;
      }[];
    }
  | { readonly kind: 'json' };

const typeOf = (s: JsonSchema): string | undefined => {
  if (typeof s.type === 'string') return s.type;
  // `["string", "null"]`: a nullable field reads as its other type.
  return s.type?.find((t) => t !== 'null');
};

/**
 * The form a schema calls for: strings, numbers, booleans, enums, arrays of strings and nested
 * objects get their own inputs; anything else (unions, arrays of objects) a JSON text area.
 *
 * @example
 * formOf({ type: 'object', properties: { approved: { type: 'boolean' } } });
 */
export function formOf(schema: JsonSchema | null | undefined, name = ''): FormField {
  if (schema === null || schema === undefined) return { kind: 'json' };
  if (schema.enum !== undefined) return { kind: 'enum', options: schema.enum };
  if (schema.anyOf !== undefined) {
    const consts = schema.anyOf.map((s) => s.const);
    if (consts.every((c) => c !== undefined)) return { kind: 'enum', options: consts };
    const nonNull = schema.anyOf.filter((s) => s.type !== 'null');
    if (nonNull.length === 1) return formOf(nonNull[0], name);
    return { kind: 'json' };
  }
  switch (typeOf(schema)) {
    case 'string':
      return { kind: 'string', multiline: /note|text|comment|reason|body/i.test(name) };
    case 'number':
      return { kind: 'number', integer: false };
    case 'integer':
      return { kind: 'number', integer: true };
    case 'boolean':
      return { kind: 'boolean' };
    case 'array':
      return schema.items !== undefined && typeOf(schema.items) === 'string' && !schema.items.enum
        ? { kind: 'strings' }
        : { kind: 'json' };
    case 'object': {
      const required = new Set(schema.required ?? []);
      return {
        kind: 'object',
        // zod lists a field with a default as required (the output has it); an answer may
        // leave it out, and it is shown with its default chosen.
        fields: Object.entries(schema.properties ?? {}).map(([name, s]) => ({
          name,
          required: required.has(name) && s.default === undefined,
          field: formOf(s, name),
          ...(s.description !== undefined && { description: s.description }),
          ...(s.default !== undefined && { default: s.default }),
        })),
      };
    }
    default:
      return { kind: 'json' };
  }
}

/** What a form's inputs hold, before they become the answer. */
export type FormValue = string | boolean | FormValue[] | { [name: string]: FormValue };

/**
 * What a form's inputs hold before anyone touched them. A yes-no question and a choice start
 * with nothing chosen ('' for both), so an untouched form never answers "no" or the first
 * option by itself; a field with a default starts at it.
 *
 * @example
 * initialValue({ kind: 'boolean' }); // '' (neither yes nor no)
 */
export function initialValue(field: FormField, fallback?: unknown): FormValue {
  if (fallback !== undefined) {
    if (field.kind === 'boolean' && typeof fallback === 'boolean') return fallback;
    if (field.kind === 'enum') return JSON.stringify(fallback);
    if (field.kind === 'string' && typeof fallback === 'string') return fallback;
    if (field.kind === 'number' && typeof fallback === 'number') return String(fallback);
  }
  switch (field.kind) {
    case 'strings':
      return [];
    case 'object':
      return Object.fromEntries(
        field.fields.map((f) => [f.name, initialValue(f.field, f.default)]),
      );
    default:
      return '';
  }
}

/**
 * The yes-no questions and choices a person must still answer before the form is sent: the
 * names (by path) of required boolean and enum fields with nothing chosen.
 *
 * @example
 * missingChoices({ kind: 'boolean' }, ''); // ['answer']
 */
export function missingChoices(field: FormField, value: FormValue, name = 'answer'): string[] {
  if (field.kind === 'boolean' || field.kind === 'enum') return value === '' ? [name] : [];
  if (field.kind !== 'object') return [];
  const v = value as Record<string, FormValue>;
  return field.fields.flatMap((f) => {
    const own = v[f.name] ?? initialValue(f.field, f.default);
    if (f.field.kind === 'object') return missingChoices(f.field, own, f.name);
    return f.required ? missingChoices(f.field, own, f.name) : [];
  });
}

/**
 * Whether an answer says no to a yes-no question, as `waymark reject` would answer it: `false`
 * for a boolean answer, or `approved: false` in an object with an `approved` field. The page
 * asks to confirm such an answer before it sends it.
 *
 * @example
 * rejects({ kind: 'boolean' }, false); // true
 */
export function rejects(field: FormField, answer: unknown): boolean {
  if (field.kind === 'boolean') return answer === false;
  if (field.kind !== 'object') return false;
  const approved = field.fields.find((f) => f.name === 'approved');
  return (
    approved?.field.kind === 'boolean' &&
    typeof answer === 'object' &&
    answer !== null &&
    (answer as Record<string, unknown>).approved === false
  );
}

/**
 * The answer the inputs make: numbers parsed, empty optional fields left out. It is not
 * checked here: the server checks it against the schema, as `waymark answer` does, and its
 * refusal is what the page shows.
 */
export function answerOf(field: FormField, value: FormValue, required = true): unknown {
  switch (field.kind) {
    case 'string':
      return value === '' && !required ? undefined : value;
    case 'number':
      return value === '' ? (required ? null : undefined) : Number(value);
    case 'boolean':
      // Nothing chosen: left out (missingChoices keeps a required one from being sent so).
      return value === '' ? undefined : value === true;
    case 'enum':
      return value === '' ? undefined : JSON.parse(value as string);
    case 'strings':
      return (value as string[]).filter((s) => s !== '');
    case 'object': {
      const v = value as Record<string, FormValue>;
      const out: Record<string, unknown> = {};
      for (const f of field.fields) {
        const a = answerOf(f.field, v[f.name] ?? initialValue(f.field, f.default), f.required);
        if (a !== undefined) out[f.name] = a;
      }
      return out;
    }
    case 'json':
      if (value === '') return required ? null : undefined;
      try {
        return JSON.parse(value as string);
      } catch {
        // Sent as it is: the server's refusal says what is wrong with it.
        return value;
      }
  }
}
