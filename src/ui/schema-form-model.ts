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
        readonly required: boolean;
        readonly field: FormField;
        readonly description?: string;
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
        fields: Object.entries(schema.properties ?? {}).map(([name, s]) => ({
          name,
          required: required.has(name),
          field: formOf(s, name),
          ...(s.description !== undefined && { description: s.description }),
        })),
      };
    }
    default:
      return { kind: 'json' };
  }
}

/** What a form's inputs hold, before they become the answer. */
export type FormValue = string | boolean | FormValue[] | { [name: string]: FormValue };

export function initialValue(field: FormField): FormValue {
  switch (field.kind) {
    case 'boolean':
      return false;
    case 'strings':
      return [];
    case 'object':
      return Object.fromEntries(field.fields.map((f) => [f.name, initialValue(f.field)]));
    case 'enum':
      return field.options.length > 0 ? JSON.stringify(field.options[0]) : '';
    default:
      return '';
  }
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
      return value === true;
    case 'enum':
      return value === '' ? undefined : JSON.parse(value as string);
    case 'strings':
      return (value as string[]).filter((s) => s !== '');
    case 'object': {
      const v = value as Record<string, FormValue>;
      const out: Record<string, unknown> = {};
      for (const f of field.fields) {
        const a = answerOf(f.field, v[f.name] ?? initialValue(f.field), f.required);
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
