import { useId } from 'react';
import { type FormField, type FormValue, initialValue } from './schema-form-model.js';

/** The inputs of one field of a form made from a JSON Schema (see `formOf`). */
export function FieldInput(props: {
  field: FormField;
  value: FormValue;
  onChange: (value: FormValue) => void;
  name: string;
  /** Whether the answer must have it (default true): an optional choice may be left as none. */
  required?: boolean;
}) {
  const { field, value, onChange, name } = props;
  switch (field.kind) {
    case 'string':
      return field.multiline ? (
        <textarea
          aria-label={name}
          value={value as string}
          onChange={(e) => onChange(e.target.value)}
          rows={3}
        />
      ) : (
        <input
          aria-label={name}
          value={value as string}
          onChange={(e) => onChange(e.target.value)}
        />
      );
    case 'number':
      return (
        <input
          aria-label={name}
          type="number"
          step={field.integer ? 1 : 'any'}
          value={value as string}
          onChange={(e) => onChange(e.target.value)}
        />
      );
    case 'boolean':
      return <YesNo name={name} value={value} onChange={onChange} />;
    case 'enum':
      return (
        <select
          aria-label={name}
          value={value as string}
          onChange={(e) => onChange(e.target.value)}
        >
          {/* Nothing is chosen until someone chooses: the first option is not an answer. */}
          <option value="" disabled={props.required !== false}>
            {props.required === false ? '(none)' : 'choose…'}
          </option>
          {field.options.map((o) => (
            <option key={JSON.stringify(o)} value={JSON.stringify(o)}>
              {typeof o === 'string' ? o : JSON.stringify(o)}
            </option>
          ))}
        </select>
      );
    case 'strings': {
      const list = value as string[];
      return (
        <div className="strings">
          {list.map((item, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: the items have no identity but their place
            <div key={i} className="string-item">
              <input
                aria-label={`${name} ${i + 1}`}
                value={item}
                onChange={(e) => onChange(list.map((x, j) => (j === i ? e.target.value : x)))}
              />
              <button type="button" onClick={() => onChange(list.filter((_, j) => j !== i))}>
                remove
              </button>
            </div>
          ))}
          <button type="button" onClick={() => onChange([...list, ''])}>
            add item
          </button>
        </div>
      );
    }
    case 'object': {
      const v = value as Record<string, FormValue>;
      return (
        <fieldset className="object">
          {field.fields.map((f) => (
            <div key={f.name} className="field">
              <span className="field-name">
                {f.name}
                {f.required ? '' : ' (optional)'}
              </span>
              {f.description !== undefined && <small>{f.description}</small>}
              <FieldInput
                name={f.name}
                field={f.field}
                value={v[f.name] ?? initialValue(f.field, f.default)}
                onChange={(x) => onChange({ ...v, [f.name]: x })}
                required={f.required}
              />
            </div>
          ))}
        </fieldset>
      );
    }
    case 'json':
      return (
        <textarea
          aria-label={name}
          className="json"
          placeholder="the answer as JSON"
          value={value as string}
          onChange={(e) => onChange(e.target.value)}
          rows={5}
        />
      );
  }
}

/**
 * A yes-no question as two radio buttons, neither chosen at first: an untouched form does not
 * say "no" by itself (a checkbox left alone would).
 */
function YesNo(props: { name: string; value: FormValue; onChange: (value: FormValue) => void }) {
  const group = useId();
  return (
    <div className="yes-no" role="radiogroup" aria-label={props.name}>
      {([true, false] as const).map((choice) => (
        <label key={String(choice)} className={props.value === choice ? 'chosen' : ''}>
          <input
            type="radio"
            name={group}
            checked={props.value === choice}
            onChange={() => props.onChange(choice)}
          />
          {choice ? 'yes' : 'no'}
        </label>
      ))}
    </div>
  );
}
