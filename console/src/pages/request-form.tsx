// The body of one request (an offer, a presentation request, a deferred completion) as a form built
// from its FormSpec, with the JSON of the whole body one click away. The API's field errors show on
// the fields they name; the problem box below repeats only those no field of the form shows.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { Problem } from '../api.js';
import { JsonEditor, ProblemView, parsedJson } from '../components.js';
import type { FormField } from '../forms.js';
import { BodyForm, type Choices, unplacedProblem } from './body-form.js';

/**
 * Inputs a page adds below the form's fields, over the same JSON text (the typed claims of an offer),
 * and which of the API's field errors they show, so that the problem box does not repeat those.
 */
export interface MoreFields {
  render: (body: string, onBody: (text: string) => void, problem?: Problem) => ComponentChildren;
  shows: (field: string) => boolean;
}

/**
 * A body as a form or as JSON, one click apart: the API's field errors show on the fields they name,
 * and the problem box below repeats only those no field of the form shows.
 */
export function BodyEditor(props: {
  fields: FormField[];
  choices?: Choices;
  body: string;
  onBody: (text: string) => void;
  problem?: Problem;
  /** Prefixes the fields' ids, for a page with several forms. */
  idPrefix?: string;
  /** Lines of the JSON editor. */
  rows?: number;
  moreFields?: MoreFields;
}) {
  const [asJson, setAsJson] = useState(false);
  const { fields, problem, moreFields } = props;
  const unplaced = asJson ? problem : unplacedProblem(problem, fields, moreFields?.shows);
  return (
    <>
      <div class="row">
        <button type="button" class="secondary" aria-pressed={asJson} onClick={() => setAsJson(!asJson)}>
          {asJson ? 'Edit as form' : 'Edit as JSON'}
        </button>
      </div>
      {asJson ? (
        <JsonEditor label="Body (JSON)" value={props.body} onInput={props.onBody} problem={problem} rows={props.rows} />
      ) : (
        <BodyForm
          fields={fields}
          choices={props.choices}
          body={props.body}
          onBody={props.onBody}
          problem={problem}
          idPrefix={props.idPrefix}
        />
      )}
      {!asJson && moreFields?.render(props.body, props.onBody, problem)}
      <ProblemView problem={unplaced} />
    </>
  );
}

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
  moreFields?: MoreFields;
}) {
  const submit = (e: Event) => {
    e.preventDefault();
    const parsed = parsedJson(props.body);
    if (parsed) props.onSubmit(parsed.value);
  };
  return (
    <form onSubmit={submit}>
      <BodyEditor
        fields={props.fields}
        choices={props.choices}
        body={props.body}
        onBody={props.onBody}
        problem={props.problem}
        moreFields={props.moreFields}
      />
      <div class="row">
        <button type="submit" disabled={props.disabled}>
          {props.submitLabel}
        </button>
        {props.extra}
      </div>
    </form>
  );
}

/**
 * A flow's request card (an offer, a presentation request): the ids its form chooses from, loaded
 * once, and a body that starts from `template` of the first of them (and goes back to it on Reset).
 * `submit` sends the body and returns the API's problem, shown on the fields it names.
 */
export function TemplatedRequest(props: {
  label: string;
  /** The field of the form whose options are the loaded ids. */
  choice: string;
  loadIds: () => Promise<{ ids?: string[]; problem?: Problem }>;
  template: (id: string) => string;
  /** What the page says while there is no id to choose. */
  empty: string;
  fields: FormField[];
  submitLabel: string;
  submit: (body: unknown) => Promise<Problem | undefined>;
  moreFields?: MoreFields;
}) {
  const { loadIds, template } = props;
  const [ids, setIds] = useState<string[]>();
  const [body, setBody] = useState('');
  const [problem, setProblem] = useState<Problem>();
  const [loadProblem, setLoadProblem] = useState<Problem>();
  const reset = useCallback(
    (list: string[]) => {
      setProblem(undefined);
      setBody(list[0] ? template(list[0]) : '');
    },
    [template],
  );
  useEffect(() => {
    void loadIds().then(({ ids: list = [], problem }) => {
      setLoadProblem(problem);
      setIds(list);
      reset(list);
    });
  }, [loadIds, reset]);

  return (
    <>
      <ProblemView problem={loadProblem} />
      <section class="card" aria-label={props.label}>
        {ids && ids.length === 0 && <p class="muted">{props.empty}</p>}
        {body && (
          <RequestForm
            fields={props.fields}
            choices={{ [props.choice]: ids ?? [] }}
            body={body}
            onBody={setBody}
            problem={problem}
            submitLabel={props.submitLabel}
            moreFields={props.moreFields}
            onSubmit={async (value) => setProblem(await props.submit(value))}
            extra={
              <button type="button" class="secondary" onClick={() => reset(ids ?? [])}>
                Reset to template
              </button>
            }
          />
        )}
      </section>
    </>
  );
}
