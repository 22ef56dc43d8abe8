// The tenant's link to a registrar (registrar:manage): its configuration (created, changed, deleted;
// the password and client secret are write-only) and an access certificate obtained from it for a
// key chain. The registration certificate of a presentation configuration is obtained again from the
// presentation configurations page (presentation:manage).
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, asBody, type Problem, result } from '../api.js';
import { formatDate, ProblemView, Table, useConfirm } from '../components.js';
import { FORMS } from '../forms.js';
import { OperationForm } from './operation-form.js';

type RegistrarConfig = NonNullable<Awaited<ReturnType<typeof loadConfig>>['data']>;
const loadConfig = () => result(api.GET('/api/registrar/config'));

/** Placeholders of a new configuration: the person's registrar and account replace them. */
const NEW_CONFIG = {
  registrarUrl: 'https://registrar.example',
  oidcUrl: 'https://registrar.example/realms/registrar',
  clientId: 'registrar-client',
  username: 'operator',
  password: 'the password at the registrar',
  // What every registration certificate request needs, unless a presentation configuration sets it.
  registrationCertificateDefaults: { privacy_policy: 'https://example.com/privacy', support_uri: 'mailto:support@example.com' },
};

export function RegistrarPage() {
  // undefined: loading; null: none configured.
  const [config, setConfig] = useState<RegistrarConfig | null>();
  const [problem, setProblem] = useState<Problem>();
  const [notice, setNotice] = useState<string>();
  const { confirm, dialog } = useConfirm();
  const load = useCallback(async () => {
    const { data, problem } = await loadConfig();
    setConfig(data ?? null);
    // No configuration is an answer (404), not a failure.
    setProblem(problem?.status === 404 ? undefined : problem);
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  const remove = async () => {
    if (!(await confirm('Delete the registrar configuration? Access and registration certificates can no longer be obtained.', 'Delete')))
      return;
    const { problem } = await result(api.DELETE('/api/registrar/config'));
    setProblem(problem);
    if (!problem) setNotice('Deleted the registrar configuration');
    await load();
  };

  return (
    <>
      <h2>Registrar</h2>
      <p class="muted">
        The registrar issues access certificates and registration certificates and keeps the schema metadata catalog. Its login is tested
        before it is stored.
      </p>
      <ProblemView problem={problem} />
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {config === null && (
        <OperationForm
          title="Connect a registrar"
          fields={FORMS.registrarConfig.fields}
          template={NEW_CONFIG}
          submitLabel="Save"
          submit={(body) => result(api.POST('/api/registrar/config', { body: asBody('/api/registrar/config', 'post', body) }))}
          done={() => undefined}
          onDone={() => {
            setNotice('Saved the registrar configuration');
            void load();
          }}
        />
      )}
      {config && (
        <>
          <section class="card" aria-label="registrar configuration">
            <Table
              label="registrar configuration"
              rows={[config]}
              columns={[
                { title: 'Registrar', cell: (c) => <code>{c.registrarUrl}</code> },
                { title: 'Identity provider', cell: (c) => <code>{c.oidcUrl}</code> },
                { title: 'Client', cell: (c) => `${c.clientId}${c.hasClientSecret ? ' (with secret)' : ''}` },
                { title: 'User', cell: (c) => `${c.username}${c.hasPassword ? '' : ' (no password)'}` },
                { title: 'Changed', cell: (c) => formatDate(c.updatedAt) },
              ]}
            />
            <div class="row">
              <button type="button" class="danger" onClick={remove}>
                Delete configuration
              </button>
            </div>
          </section>
          <OperationForm
            title="Change the registrar configuration"
            intro={<p class="muted">Fields left out stay as they are; the password and client secret are only ever sent, never shown.</p>}
            fields={FORMS.registrarConfigUpdate.fields}
            template={{
              registrarUrl: config.registrarUrl,
              oidcUrl: config.oidcUrl,
              clientId: config.clientId,
              username: config.username,
              registrationCertificateDefaults: config.registrationCertificateDefaults,
            }}
            submitLabel="Save changes"
            submit={(body) => result(api.PATCH('/api/registrar/config', { body: asBody('/api/registrar/config', 'patch', body) }))}
            done={() => 'Saved the registrar configuration'}
            onDone={() => void load()}
          />
          <OperationForm
            title="Obtain an access certificate"
            intro={
              <p class="muted">
                The registrar certifies the key chain's active key; the certificate replaces the chain's certificate, and request objects
                signed with it carry it.
              </p>
            }
            fields={FORMS.accessCertificate.fields}
            template={{}}
            submitLabel="Obtain certificate"
            submit={(body) =>
              result(api.POST('/api/registrar/access-certificate', { body: asBody('/api/registrar/access-certificate', 'post', body) }))
            }
            done={(data) => `Access certificate stored on key chain ${(data as { id: string }).id}`}
            showAnswer
          />
        </>
      )}
      {dialog}
    </>
  );
}
