// One operation of the API as a card: its request body as a form (the fields of a FormSpec) or as
// JSON, one click apart, starting from a template that is valid as it stands; the API's field errors
// on the fields; the answer shown below. The pages that are not a list of resources (registrar,
// schema metadata) are made of these.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Problem, Result } from '../api.js';
import { parsedJson, useConfirm } from '../components.js';
import type { FormField } from '../forms.js';
import { BodyEditor } from './request-form.js';

export interface OperationFormProps {
  title: string;
  fields: FormField[];
  /** The body the editor starts with (again after each success); a change of it restarts the editor. */
  template: unknown;
  submit: (body: unknown) => Promise<Result<unknown>>;
  submitLabel: string;
  /** What a success says (role=status); undefined: the page says it (the form goes away on success). */
  done: (data: unknown) => string | undefined;
  /** Destructive operations ask first: the question. */
  confirm?: string;
  /** Show the answer's JSON below the form. */
  showAnswer?: boolean;
  onDone?: (data: unknown) => void;
  intro?: ComponentChildren;
}

const pretty = (value: unknown) => JSON.stringify(value, null, 2);

export function OperationForm(props: OperationFormProps) {
  const [body, setBody] = useState(pretty(props.template));
  const [problem, setProblem] = useState<Problem>();
  const [notice, setNotice] = useState<string>();
  const [answer, setAnswer] = useState<unknown>();
  const { confirm, dialog } = useConfirm();
  const templateText = pretty(props.template);
  useEffect(() => setBody(templateText), [templateText]);

  const submit = async (e: Event) => {
    e.preventDefault();
    const parsed = parsedJson(body);
    if (!parsed) return;
    if (props.confirm && !(await confirm(props.confirm, props.submitLabel))) return;
    setNotice(undefined);
    const { data, problem } = await props.submit(parsed.value);
    setProblem(problem);
    setAnswer(problem ? undefined : data);
    if (problem) return;
    setNotice(props.done(data));
    props.onDone?.(data);
  };

  return (
    <section class="card" aria-label={props.title}>
      <form class="operation" onSubmit={submit}>
        <h3>{props.title}</h3>
        {props.intro}
        <BodyEditor
          fields={props.fields}
          body={body}
          onBody={setBody}
          problem={problem}
          idPrefix={`${props.title.replace(/\W/g, '-')}-`}
          rows={10}
        />
        {notice && (
          <p class="notice" role="status">
            {notice}
          </p>
        )}
        <div class="row">
          <button type="submit" class={props.confirm ? 'danger' : undefined}>
            {props.submitLabel}
          </button>
        </div>
        {props.showAnswer && answer !== undefined && answer !== null && (
          <details class="answer">
            <summary>Answer</summary>
            <pre>{pretty(answer)}</pre>
          </details>
        )}
      </form>
      {dialog}
    </section>
  );
}
