// One labelled control with its hint and its errors below it, tied to it by aria-describedby, so that
// the label alone names the control (a test or a screen reader finds it by that name) and the hint
// and errors are read as its description. The body form does the same for its fields.
import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import type { Problem } from '../api.js';
import { FieldErrors } from '../components.js';

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
      <FieldNote id={note} hint={props.hint} errors={errors} />
    </div>
  );
}

/**
 * A control's hint and the errors a 400 named on it, read as the control's description (its
 * aria-describedby is `id`). Each error names the field the API named (config.display.0.name), so
 * that a message on a row says which; `named={false}` where the control alone is that field.
 */
export function FieldNote({ id, hint, errors, named = true }: { id?: string; hint?: string; errors: Problem['fields']; named?: boolean }) {
  if (!id) return null;
  return (
    <span id={id}>
      {hint && <span class="muted">{hint}</span>}
      <FieldErrors errors={errors} named={named} />
    </span>
  );
}

/** The errors of a 400 on the body field `field` (and inside it, unless `exact`). */
export function errorsAt(problem: Problem | undefined, field: string, exact = false) {
  return (problem?.fields ?? []).filter((f) => f.field === field || (!exact && f.field.startsWith(`${field}.`)));
}
