// The body of one request (an offer, a presentation request, a deferred completion) as a form built
// from its FormSpec, with the JSON of the whole body one click away. The API's field errors show on
// the fields they name; the problem box below repeats only those no field of the form shows.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { Problem } from '../api.js';
import { JsonEditor, ProblemView, parsedJson } from '../components.js';
import type { FormField } from '../forms.js';
import { BodyForm, type Choices, isOn } from './body-form.js';

export function RequestForm(props: {
  fields: FormField[];
  choices?: Choices;
  body: string;
  onBody: (text: string) => void;
  problem?: Problem;
  submitLabel: string;
  /** Called with the parsed body (never while the JSON does not parse). */
  onSubmit: (body: unknown) => void;
  /** Besides the submit button (a reset to the template, say). */
  extra?: ComponentChildren;
  disabled?: boolean;
}) {
  const [asJson, setAsJson] = useState(false);
  const unplaced =
    props.problem && !asJson
      ? { ...props.problem, fields: props.problem.fields.filter((f) => !props.fields.some((field) => isOn(f.field, field.path))) }
      : props.problem;
  const submit = (e: Event) => {
    e.preventDefault();
    const parsed = parsedJson(props.body);
    if (parsed) props.onSubmit(parsed.value);
  };
  return (
    <form onSubmit={submit}>
      <div class="row">
        <button type="button" class="secondary" aria-pressed={asJson} onClick={() => setAsJson(!asJson)}>
          {asJson ? 'Edit as form' : 'Edit as JSON'}
        </button>
      </div>
      {asJson ? (
        <JsonEditor label="Body (JSON)" value={props.body} onInput={props.onBody} problem={props.problem} />
      ) : (
        <BodyForm fields={props.fields} choices={props.choices} body={props.body} onBody={props.onBody} problem={props.problem} />
      )}
      <ProblemView problem={unplaced} />
      <div class="row">
        <button type="submit" disabled={props.disabled}>
          {props.submitLabel}
        </button>
        {props.extra}
      </div>
    </form>
  );
}
