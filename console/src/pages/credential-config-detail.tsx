// One credential configuration (#/credential-configs/{id}): what it issues (format, type, display),
// its claims with which are mandatory and which disclosable, the key chain that signs it, its status
// management, the entry wallets read in the tenant's issuer metadata, its recent sessions, and
// delete. Editing stays on the list page, where the configuration's form is.
import { useEffect, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/index.js';
import { api, type Problem, result, session } from '../api.js';
import { DeletedNotice, formatDate, JsonBlock, ProblemView, Table, useConfirm } from '../components.js';
import { StatusBadge } from './live-session.js';

type CredentialConfiguration = components['schemas']['CredentialConfiguration'];
type Field = CredentialConfiguration['fields'][number];
type SessionRow = components['schemas']['SessionPage']['items'][number];

/** The fields with their children, each with its whole claim path. */
function claimRows(fields: Field[], parent: Field['path'] = []): { path: string; field: Field }[] {
  return fields.flatMap((field) => {
    const path = [...parent, ...field.path];
    const children = (field as { children?: Field[] }).children ?? [];
    return [{ path: path.map((p) => (p === null ? '[*]' : String(p))).join(' › '), field }, ...claimRows(children, path)];
  });
}

/** The configuration as wallets see it: its entry in the tenant's /.well-known/openid-credential-issuer. */
async function issuerMetadataEntry(tenantId: string, id: string): Promise<unknown> {
  const reply = await fetch(`/issuers/${encodeURIComponent(tenantId)}/.well-known/openid-credential-issuer`, {
    headers: { accept: 'application/json' },
  });
  if (!reply.ok) return undefined;
  const metadata = (await reply.json()) as { credential_configurations_supported?: Record<string, unknown> };
  const supported = metadata.credential_configurations_supported ?? {};
  return Object.hasOwn(supported, id) ? supported[id] : undefined;
}

export function CredentialConfigDetail({ id }: { id: string }) {
  const [config, setConfig] = useState<CredentialConfiguration>();
  const [published, setPublished] = useState<unknown>();
  const [sessions, setSessions] = useState<SessionRow[]>();
  const [problem, setProblem] = useState<Problem>();
  const [deleted, setDeleted] = useState(false);
  const { confirm, dialog } = useConfirm();
  const path = { params: { path: { id } } };
  const tenantId = session()?.tenantId;

  useEffect(() => {
    void result(api.GET('/api/issuer/credentials/{id}', { params: { path: { id } } })).then(({ data, problem }) => {
      setConfig(data);
      setProblem(problem);
    });
    void result(api.GET('/api/session', { params: { query: { configurationId: id, pageSize: 10 } } })).then(({ data }) =>
      setSessions(data?.items),
    );
    if (tenantId) void issuerMetadataEntry(tenantId, id).then(setPublished);
  }, [id, tenantId]);

  const remove = async () => {
    if (!(await confirm(`Delete the credential configuration ${id}? Wallets can no longer obtain it.`, 'Delete'))) return;
    const reply = await result(api.DELETE('/api/issuer/credentials/{id}', path));
    setProblem(reply.problem);
    if (!reply.problem) setDeleted(true);
  };

  if (deleted)
    return (
      <DeletedNotice what="Credential configuration" id={id} list={{ route: 'credential-configs', label: 'credential configurations' }} />
    );
  const display = config?.config.display ?? [];
  return (
    <>
      <h2>
        Credential configuration <code>{id}</code>
      </h2>
      <p>
        <a href="#/credential-configs">All credential configurations</a>
      </p>
      <ProblemView problem={problem} />
      {config && (
        <>
          <dl class="facts">
            <dt>Format</dt>
            <dd>{config.config.format}</dd>
            <dt>Type</dt>
            <dd>{typeof config.vct === 'string' ? config.vct : (config.vct?.vct ?? config.config.docType ?? '')}</dd>
            <dt>Display</dt>
            <dd>{display.length > 0 ? display.map((d) => `${d.name}${d.locale ? ` (${d.locale})` : ''}`).join(', ') : 'none'}</dd>
            <dt>Key chain</dt>
            <dd>
              {config.keyChainId ? (
                <a href={`#/key-chains/${encodeURIComponent(config.keyChainId)}`}>{config.keyChainId}</a>
              ) : (
                "the tenant's default attestation key chain"
              )}
            </dd>
            <dt>Status management</dt>
            <dd>{config.statusManagement ? 'on: each credential gets a status list entry' : 'off'}</dd>
            <dt>Key binding</dt>
            <dd>{config.keyBinding ? 'yes' : 'no'}</dd>
            <dt>Updated</dt>
            <dd>{formatDate(config.updatedAt)}</dd>
          </dl>
          <section class="card" aria-label="claims">
            <h3>Claims</h3>
            <Table
              label="claim definitions"
              rows={claimRows(config.fields)}
              empty="No claims defined."
              columns={[
                { title: 'Claim', cell: (r) => <code>{r.path}</code> },
                { title: 'Type', cell: (r) => r.field.type },
                { title: 'Mandatory', cell: (r) => (r.field.mandatory ? 'yes' : 'no') },
                { title: 'Disclosable', cell: (r) => (r.field.disclosable === false ? 'no' : 'yes') },
              ]}
            />
          </section>
        </>
      )}
      <section class="card" aria-label="recent sessions">
        <h3>Recent sessions</h3>
        <Table
          label="session list"
          rows={sessions ?? []}
          empty="No sessions of this configuration."
          columns={[
            { title: 'Session', cell: (s) => <a href={`#/sessions/${encodeURIComponent(s.id)}`}>{s.id}</a> },
            { title: 'Status', cell: (s) => <StatusBadge status={s.status} /> },
            { title: 'Created', cell: (s) => formatDate(s.createdAt) },
          ]}
        />
        <a href={`#/sessions?configuration=${encodeURIComponent(id)}`}>All sessions of {id}</a>
      </section>
      <section class="card" aria-label="issuer metadata entry">
        <h3>As wallets see it</h3>
        {published === undefined ? (
          <p class="muted">Not in the tenant's issuer metadata.</p>
        ) : (
          <details>
            <summary>The entry in /.well-known/openid-credential-issuer</summary>
            <JsonBlock value={published} label="metadata entry JSON" />
          </details>
        )}
      </section>
      <div class="row">
        <a href="#/credential-configs">Edit in the list</a>
        <button type="button" class="danger" onClick={remove}>
          Delete {id}
        </button>
      </div>
      {dialog}
    </>
  );
}
