// Pieces every page uses: problem display, a JSON editor that marks the fields a 400 names, a
// table, a pager, a QR code.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import QRCode from 'qrcode';
import { call, type Problem } from './api.js';

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
      {fieldErrors.map((f) => (
        <span class="field-error" key={f.field}>
          {f.field}: {f.message}
        </span>
      ))}
    </label>
  );
}

export interface Column<T> {
  title: string;
  cell: (row: T) => ComponentChildren;
}

export function Table<T>({ rows, columns, empty }: { rows: T[]; columns: Column<T>[]; empty?: string }) {
  if (rows.length === 0) return <p class="muted">{empty ?? 'Nothing here yet.'}</p>;
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.title} scope="col">
                {c.title}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, i) => (
            <tr key={i}>
              {columns.map((c) => (
                <td key={c.title}>{c.cell(row)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
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

export const formatDate = (iso?: string | null) => (iso ? new Date(iso).toLocaleString() : '');

/** The JSON in an editor, or undefined while it does not parse (the editor shows why). */
export function parsedJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

/** The ids of a tenant's configurations at `path`, and the one chosen (the first, until another is). */
export function useConfigurationChoice(path: string, label: string) {
  const [ids, setIds] = useState<string[]>([]);
  const [chosen, setChosen] = useState('');
  const [problem, setProblem] = useState<Problem>();
  useEffect(() => {
    void call('GET', path).then(({ data, problem }) => {
      setProblem(problem);
      const list = Array.isArray(data) ? (data as { id: string }[]).map((c) => c.id) : [];
      setIds(list);
      setChosen((current) => current || list[0] || '');
    });
  }, [path]);
  const select = (
    <label>
      {label}
      <select value={chosen} onChange={(e) => setChosen((e.target as HTMLSelectElement).value)}>
        {ids.map((id) => (
          <option key={id} value={id}>
            {id}
          </option>
        ))}
      </select>
    </label>
  );
  return { chosen, select, loadProblem: problem };
}
