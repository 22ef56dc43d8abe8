// Settings that are one object per tenant (GET and PUT, DELETE resets to the defaults).
import { useEffect, useState } from 'preact/hooks';
import { api, asBody, type Problem, type Result, result } from '../api.js';
import { JsonEditor, ProblemView, parsedJson, useConfirm } from '../components.js';

export interface Settings {
  title: string;
  load: () => Promise<Result<unknown>>;
  save: (body: unknown) => Promise<Result<unknown>>;
  /** Absent: the settings cannot be reset. */
  reset?: () => Promise<Result<unknown>>;
}

export const issuerSettings: Settings = {
  title: 'Issuer settings',
  load: () => result(api.GET('/api/issuer/config')),
  save: (body) => result(api.PUT('/api/issuer/config', { body: asBody('/api/issuer/config', 'put', body) })),
};
export const statusListSettings: Settings = {
  title: 'Status list settings',
  load: () => result(api.GET('/api/status-list-config')),
  save: (body) => result(api.PUT('/api/status-list-config', { body: asBody('/api/status-list-config', 'put', body) })),
  reset: () => result(api.DELETE('/api/status-list-config')),
};
export const sessionSettings: Settings = {
  title: 'Session retention',
  // The answer tells which values are global defaults; what is sent back is the values alone.
  load: async () => {
    const reply = await result(api.GET('/api/session-config'));
    return reply.data ? { data: { ttlSeconds: reply.data.ttlSeconds, cleanupMode: reply.data.cleanupMode } } : reply;
  },
  save: (body) => result(api.PUT('/api/session-config', { body: asBody('/api/session-config', 'put', body) })),
  reset: () => result(api.DELETE('/api/session-config')),
};

export function SettingsPage({ settings }: { settings: Settings }) {
  const [body, setBody] = useState('');
  const [problem, setProblem] = useState<Problem>();
  const [saved, setSaved] = useState<string>();
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
          <JsonEditor
            label="Settings (JSON)"
            value={body}
            onInput={(v) => {
              setSaved(undefined);
              setBody(v);
            }}
            problem={problem}
          />
          <ProblemView problem={problem} />
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
