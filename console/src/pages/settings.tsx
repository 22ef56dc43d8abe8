// Settings that are one object per tenant (GET and PUT, DELETE resets to the defaults), as a form of
// typed fields (forms.ts, checked against the API) with the JSON one click away: both edit the same
// text, so members the form does not show are sent back as they came.
import { useEffect, useState } from 'preact/hooks';
import { api, asBody, type Problem, type Result, result } from '../api.js';
import { JsonEditor, ProblemView, parsedJson, useConfirm } from '../components.js';
import { type FormField, SETTINGS_FORMS } from '../forms.js';
import { BodyForm, unplacedProblem } from './body-form.js';

export interface Settings {
  title: string;
  load: () => Promise<Result<unknown>>;
  save: (body: unknown) => Promise<Result<unknown>>;
  /** Absent: the settings cannot be reset. */
  reset?: () => Promise<Result<unknown>>;
  form: FormField[];
}

export const issuerSettings: Settings = {
  title: 'Issuer settings',
  load: () => result(api.GET('/api/issuer/config')),
  save: (body) => result(api.PUT('/api/issuer/config', { body: asBody('/api/issuer/config', 'put', body) })),
  // The federation block is edited with the trust settings (the same value under two names).
  form: SETTINGS_FORMS.issuerSettings.fields,
};
export const statusListSettings: Settings = {
  title: 'Status list settings',
  load: () => result(api.GET('/api/status-list-config')),
  save: (body) => result(api.PUT('/api/status-list-config', { body: asBody('/api/status-list-config', 'put', body) })),
  reset: () => result(api.DELETE('/api/status-list-config')),
  form: SETTINGS_FORMS.statusListSettings.fields,
};
export const sessionSettings: Settings = {
  title: 'Session retention',
  // The answer tells which values are global defaults: those are sent back as null (the API's "use
  // the global default"), so that saving does not pin today's global value on the tenant.
  load: async () => {
    const reply = await result(api.GET('/api/session-config'));
    if (!reply.data) return reply;
    const { ttlSeconds, cleanupMode, usesGlobalDefault } = reply.data;
    return {
      data: {
        ttlSeconds: usesGlobalDefault.ttlSeconds ? null : ttlSeconds,
        cleanupMode: usesGlobalDefault.cleanupMode ? null : cleanupMode,
      },
    };
  },
  save: (body) => result(api.PUT('/api/session-config', { body: asBody('/api/session-config', 'put', body) })),
  reset: () => result(api.DELETE('/api/session-config')),
  form: SETTINGS_FORMS.sessionSettings.fields,
};
export const trustSettings: Settings = {
  title: 'Trust settings',
  load: () => result(api.GET('/api/trust-config')),
  save: (body) => result(api.PUT('/api/trust-config', { body: asBody('/api/trust-config', 'put', body) })),
  form: SETTINGS_FORMS.trustSettings.fields,
};

export function SettingsPage({ settings }: { settings: Settings }) {
  const [body, setBody] = useState('');
  const [problem, setProblem] = useState<Problem>();
  const [saved, setSaved] = useState<string>();
  const [asJson, setAsJson] = useState(false);
  const { confirm, dialog } = useConfirm();
  const load = () =>
    settings.load().then(({ data, problem }) => {
      setProblem(problem);
      setBody(JSON.stringify(data ?? {}, null, 2));
    });
  useEffect(() => {
    setSaved(undefined);
    void load();
  }, [settings]);

  const edit = (text: string) => {
    setSaved(undefined);
    setBody(text);
  };
  const save = async (e: Event) => {
    e.preventDefault();
    const parsed = parsedJson(body);
    if (!parsed) return;
    const { problem } = await settings.save(parsed.value);
    setProblem(problem);
    setSaved(problem ? undefined : 'Saved');
  };
  const reset = async () => {
    if (!settings.reset) return;
    if (!(await confirm(`Reset the ${settings.title.toLowerCase()} to the service's defaults?`, 'Reset'))) return;
    const { problem } = await settings.reset();
    setProblem(problem);
    if (!problem) {
      setSaved('Reset to the defaults');
      await load();
    }
  };

  return (
    <>
      <h2>{settings.title}</h2>
      <section class="card">
        <form onSubmit={save}>
          <div class="row">
            <button type="button" class="secondary" aria-pressed={asJson} onClick={() => setAsJson(!asJson)}>
              {asJson ? 'Edit as form' : 'Edit as JSON'}
            </button>
          </div>
          {asJson ? (
            <JsonEditor label="Settings (JSON)" value={body} onInput={edit} problem={problem} />
          ) : (
            body && <BodyForm fields={settings.form} body={body} onBody={edit} problem={problem} idPrefix="settings-" />
          )}
          <ProblemView problem={asJson ? problem : unplacedProblem(problem, settings.form)} />
          {saved && (
            <p class="notice" role="status">
              {saved}
            </p>
          )}
          <div class="row">
            <button type="submit">Save</button>
            {settings.reset && (
              <button type="button" class="danger" onClick={reset}>
                Reset to defaults
              </button>
            )}
          </div>
        </form>
      </section>
      {dialog}
    </>
  );
}
