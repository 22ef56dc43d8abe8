// One labelled control with its hint and its errors below it, tied to it by aria-describedby, so that
// the label alone names the control (a test or a screen reader finds it by that name) and the hint
// and errors are read as its description. The body form does the same for its fields.
import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import type { Problem } from '../api.js';

export interface ControlAttributes {
  id: string;
  'aria-describedby'?: string;
  'aria-invalid': boolean;
}

export function LabelledField(props: {
  label: string;
  hint?: string;
  errors?: Problem['fields'];
  control: (attributes: ControlAttributes) => ComponentChildren;
}) {
  const id = useId();
  const errors = props.errors ?? [];
  const note = props.hint || errors.length ? `${id}-note` : undefined;
  return (
    <div class="form-field">
      <label for={id}>{props.label}</label>
      {props.control({ id, 'aria-describedby': note, 'aria-invalid': errors.length > 0 })}
      {note && (
        <span id={note}>
          {props.hint && <span class="muted">{props.hint}</span>}
          {errors.map((f) => (
            <span class="field-error" key={f.field}>
              {f.field}: {f.message}
            </span>
          ))}
        </span>
      )}
    </div>
  );
}

/** The errors of a 400 on the body field `field` (and inside it, unless `exact`). */
export function errorsAt(problem: Problem | undefined, field: string, exact = false) {
  return (problem?.fields ?? []).filter((f) => f.field === field || (!exact && f.field.startsWith(`${field}.`)));
}
