// Pieces every page uses: problem display, a JSON editor that marks the fields a 400 names, a
// table, a pager, a QR code, the confirmation of a destructive action and the one-time secret dialog.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import QRCode from 'qrcode';
import type { Problem } from './api.js';

/** The value, or the checked state, of the input, select or textarea an event came from. */
export const inputValue = (e: Event) => (e.target as HTMLInputElement).value;
export const checked = (e: Event) => (e.target as HTMLInputElement).checked;

/**
 * A text input whose text is read when the user leaves it (a list, a path, a name): what is typed
 * stays as typed until then. A controlled input that re-renders meanwhile (say, when data another
 * field needs arrives) would be put back to the stored value, and the typing lost.
 */
export function DraftInput({
  value,
  onCommit,
  ...attributes
}: {
  id?: string;
  'aria-describedby'?: string;
  'aria-invalid'?: boolean;
  value: string;
  onCommit: (text: string) => void;
}) {
  const [draft, setDraft] = useState<string>();
  return (
    <input
      {...attributes}
      value={draft ?? value}
      onInput={(e) => setDraft(inputValue(e))}
      onChange={(e) => {
        setDraft(undefined);
        onCommit(inputValue(e));
      }}
      onBlur={() => setDraft(undefined)}
    />
  );
}

export function ProblemView({ problem }: { problem?: Problem }) {
  if (!problem) return null;
  return (
    <div class="problem" role="alert">
      <strong>
        {problem.status} {problem.title}
      </strong>
      {problem.detail && <div>{problem.detail}</div>}
      {problem.fields.length > 0 && (
        <ul>
          {problem.fields.map((f) => (
            <li key={f.field}>
              <code>{f.field}</code>: {f.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** A JSON body editor: parse errors are shown at once, the fields a problem names below it. */
export function JsonEditor(props: { label: string; value: string; onInput: (value: string) => void; problem?: Problem; rows?: number }) {
  let parseError: string | undefined;
  try {
    JSON.parse(props.value);
  } catch (err) {
    parseError = (err as Error).message;
  }
  const fieldErrors = props.problem?.fields ?? [];
  return (
    <label>
      {props.label}
      <textarea
        rows={props.rows ?? 14}
        spellcheck={false}
        value={props.value}
        aria-invalid={parseError !== undefined || fieldErrors.length > 0}
        onInput={(e) => props.onInput((e.target as HTMLTextAreaElement).value)}
      />
      {parseError && <span class="field-error">Not JSON: {parseError}</span>}
      <FieldErrors errors={fieldErrors} />
    </label>
  );
}

/** The errors a 400 named, each after the field it names unless `named` is false. */
export function FieldErrors({ errors, named = true }: { errors: Problem['fields']; named?: boolean }) {
  return (
    <>
      {errors.map((e) => (
        <span class="field-error" key={e.field}>
          {' '}
          {named && (
            <>
              <code>{e.field.replace(/^body\./, '')}</code>:{' '}
            </>
          )}
          {e.message}
        </span>
      ))}
    </>
  );
}

export interface Column<T> {
  title: string;
  cell: (row: T) => ComponentChildren;
  /** A row's buttons: on a phone they stay in view while the rest of the table scrolls sideways. */
  actions?: boolean;
}

/**
 * A table in a box that scrolls sideways on a narrow screen. The box takes the keyboard focus (a named
 * region), so that the columns out of view can be scrolled to without a mouse even where no cell holds
 * a link or button.
 */
export function Table<T>({ rows, columns, empty, label }: { rows: T[]; columns: Column<T>[]; empty?: string; label?: string }) {
  if (rows.length === 0) return <p class="muted">{empty ?? 'Nothing here yet.'}</p>;
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
    <section class="table-wrap" aria-label={label ?? 'table'} tabIndex={0}>
      <table>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.title} scope="col" class={c.actions ? 'actions-column' : undefined}>
                {c.title}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, i) => (
            <tr key={i}>
              {columns.map((c) => (
                <td key={c.title} class={c.actions ? 'actions-column' : undefined}>
                  {c.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** Client-side pages over a list the API returns whole. */
export function usePaged<T>(rows: T[], pageSize = 20) {
  const [page, setPage] = useState(1);
  const pages = Math.max(1, Math.ceil(rows.length / pageSize));
  const shown = rows.slice((Math.min(page, pages) - 1) * pageSize, Math.min(page, pages) * pageSize);
  return { shown, pager: <Pager page={Math.min(page, pages)} pages={pages} onPage={setPage} /> };
}

export function Pager({ page, pages, onPage }: { page: number; pages: number; onPage: (page: number) => void }) {
  if (pages <= 1) return null;
  return (
    <nav class="row" aria-label="pages">
      <button type="button" class="secondary" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <span>
        page {page} of {pages}
      </span>
      <button type="button" class="secondary" disabled={page >= pages} onClick={() => onPage(page + 1)}>
        Next
      </button>
    </nav>
  );
}

export function Qr({ text, label }: { text: string; label: string }) {
  const [svg, setSvg] = useState('');
  useEffect(() => {
    QRCode.toString(text, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' }).then(setSvg, () => setSvg(''));
  }, [text]);
  // The SVG comes from the QR library, never from the API: it holds only paths.
  return <div class="qr" role="img" aria-label={label} dangerouslySetInnerHTML={{ __html: svg }} />;
}

/** Hands `content` (text, or the bytes of a blob) to the browser as a file named `filename`. */
export function saveAs(content: string | Blob, filename: string, type: string) {
  const url = URL.createObjectURL(new Blob([content], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  link.click();
  // The download has taken its copy once click() returns; the URL would only hold the memory.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

export const formatDate = (iso?: string | null) => (iso ? new Date(iso).toLocaleString() : '');

/** The JSON in an editor, or undefined while it does not parse (the editor shows why). */
export function parsedJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

/** A modal dialog (the browser's own: focus stays inside, Escape closes it) shown while `open`. */
function Modal(props: { open: boolean; label: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (props.open && !dialog.open) dialog.showModal();
    if (!props.open && dialog.open) dialog.close();
  }, [props.open]);
  return (
    <dialog ref={ref} aria-label={props.label} onClose={props.onClose}>
      {props.open && props.children}
    </dialog>
  );
}

interface PendingConfirmation {
  question: string;
  action: string;
  answer: (yes: boolean) => void;
}

/**
 * Destructive actions ask first: `confirm(question, action)` resolves true when the person chose
 * `action`, false on Cancel or Escape. Render `dialog` once in the page.
 */
export function useConfirm() {
  const [pending, setPending] = useState<PendingConfirmation>();
  const confirm = (question: string, action: string) =>
    new Promise<boolean>((resolve) => setPending({ question, action, answer: resolve }));
  const close = (yes: boolean) => {
    pending?.answer(yes);
    setPending(undefined);
  };
  const dialog = (
    <Modal open={pending !== undefined} label="Confirm" onClose={() => close(false)}>
      <form method="dialog" class="dialog" onSubmit={(e) => e.preventDefault()}>
        <p>{pending?.question}</p>
        <div class="row">
          <button type="button" class="danger" onClick={() => close(true)}>
            {pending?.action}
          </button>
          <button type="button" class="secondary" autofocus onClick={() => close(false)}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
  return { confirm, dialog };
}

export interface OneTimeSecret {
  /** What it is, e.g. "Client secret of acme-admin". */
  label: string;
  value: string;
  /** Who it belongs to, shown beside the secret. */
  owner?: string;
}

/** A secret the service shows once: in a dialog with a copy button and the warning that it will not be shown again. */
export function SecretDialog({ secret, onClose }: { secret?: OneTimeSecret; onClose: () => void }) {
  const [copied, setCopied] = useState(false);
  useEffect(() => setCopied(false), [secret]);
  const copy = async () => {
    if (!secret) return;
    await navigator.clipboard.writeText(secret.value);
    setCopied(true);
  };
  return (
    <Modal open={secret !== undefined} label={secret?.label ?? 'Secret'} onClose={onClose}>
      <div class="dialog">
        <h3>{secret?.label}</h3>
        {secret?.owner && (
          <p>
            For <code>{secret.owner}</code>
          </p>
        )}
        <p class="warning" role="note">
          Shown once: copy it now. The service keeps only its hash and cannot show it again.
        </p>
        <output class="secret" data-testid="one-time-secret">
          {secret?.value}
        </output>
        <div class="row">
          <button type="button" onClick={copy}>
            Copy
          </button>
          {copied && (
            <span role="status" class="muted">
              Copied
            </span>
          )}
          <button type="button" class="secondary" onClick={onClose}>
            Done
          </button>
        </div>
      </div>
    </Modal>
  );
}

/**
 * A value as JSON in a box that scrolls sideways on a narrow screen, and takes the keyboard focus
 * (a named region) so that the lines out of view can be scrolled to without a mouse.
 */
export function JsonBlock({ value, label, testId }: { value: unknown; label: string; testId?: string }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
    <section class="json-block" tabIndex={0} aria-label={label}>
      <pre data-testid={testId}>{JSON.stringify(value, null, 2)}</pre>
    </section>
  );
}

/**
 * Puts `text` on the clipboard. The button says "Copy" and is named "Copy {label}" for a screen
 * reader; "Copied" shows beside it (a status, so it is announced) until the text changes.
 */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [said, setSaid] = useState('');
  useEffect(() => setSaid(''), [text]);
  const copy = () =>
    navigator.clipboard.writeText(text).then(
      () => setSaid('Copied'),
      () => setSaid('Not copied: the browser refused the clipboard'),
    );
  return (
    <span class="copy">
      <button type="button" class="secondary" aria-label={`Copy ${label}`} onClick={copy}>
        Copy
      </button>
      <span role="status" class="muted">
        {said}
      </span>
    </span>
  );
}

/** What a detail page shows once its item is deleted: the page's subject is gone, the way back to its list. */
export function DeletedNotice({ what, id, list }: { what: string; id: string; list: { route: string; label: string } }) {
  return (
    <>
      <h2>{what} deleted</h2>
      <p class="notice" role="status">
        <code>{id}</code> was deleted. <a href={`#/${list.route}`}>Back to the {list.label}</a>
      </p>
    </>
  );
}
