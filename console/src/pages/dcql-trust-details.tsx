// Detail pages of a presentation configuration (#/presentation-configs/{id}: its DCQL query as a
// table of credentials and claims, the trusted authorities and credential sets, the raw JSON; edit,
// delete, create a request with it) and of a trust list (#/trust-lists/{id}: its entities with their
// certificates, where it is published, its versions; edit, delete).
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, asBody, type Problem, publishedUrl, type Result, result, session } from '../api.js';
import { formatDate, JsonBlock, JsonEditor, ProblemView, parsedJson, Qr, Table, useConfirm } from '../components.js';
import { FORMS, type FormField } from '../forms.js';
import { BodyForm } from './body-form.js';
import { DcqlBuilder } from './dcql-builder.js';
import { pathText } from './fields-form.js';
import { CertificateDetails, TrustEntitiesEditor, useKeyChains } from './trust-entities.js';

const pretty = (value: unknown) => JSON.stringify(value, null, 2);

type Json = Record<string, unknown>;
interface CredentialQuery {
  id: string;
  format: string;
  multiple?: boolean;
  meta?: Json;
  claims?: { id?: string; path: (string | number | null)[]; values?: unknown[]; intent_to_retain?: boolean }[];
  claim_sets?: string[][];
  trusted_authorities?: { type: string; values: string[] }[];
}
interface DcqlQuery {
  credentials: CredentialQuery[];
  credential_sets?: { options: string[][]; required?: boolean }[];
}

/** What a credential query asks for by type: its vct values, its doctype, or its meta as JSON. */
function typeOf(c: CredentialQuery) {
  if (Array.isArray(c.meta?.vct_values)) return (c.meta.vct_values as string[]).join(', ');
  if (typeof c.meta?.doctype_value === 'string') return c.meta.doctype_value;
  return c.meta ? JSON.stringify(c.meta) : '';
}

function claimText(claim: NonNullable<CredentialQuery['claims']>[number]) {
  const values = claim.values?.length ? ` = ${claim.values.map((v) => JSON.stringify(v)).join(' or ')}` : '';
  const id = claim.id ? ` (${claim.id})` : '';
  return `${pathText(claim.path ?? [])}${values}${id}${claim.intent_to_retain ? ', retained' : ''}`;
}

/** An edit card on a detail page: a form beside a view of the same JSON (a builder), or the JSON alone. */
function EditCard(props: {
  fields: FormField[];
  initial: unknown;
  aside: (props: { body: string; onBody: (text: string) => void; problem?: Problem }) => ComponentChildren;
  save: (body: unknown) => Promise<Result<unknown>>;
  onSaved: () => void;
  onCancel: () => void;
}) {
  const [body, setBody] = useState(pretty(props.initial));
  const [problem, setProblem] = useState<Problem>();
  const [asJson, setAsJson] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const parsed = parsedJson(body);
    if (!parsed) return;
    const reply = await props.save(parsed.value);
    setProblem(reply.problem);
    if (!reply.problem) props.onSaved();
  };
  return (
    <section class="card">
      <form onSubmit={submit}>
        <h3>Change</h3>
        <div class="row">
          <button type="button" class="secondary" aria-pressed={asJson} onClick={() => setAsJson(!asJson)}>
            {asJson ? 'Edit as form' : 'Edit as JSON'}
          </button>
        </div>
        <div class="editor-pair">
          {asJson ? (
            <JsonEditor label="Body (JSON)" value={body} onInput={setBody} problem={problem} />
          ) : (
            <BodyForm fields={props.fields} body={body} onBody={setBody} problem={problem} idPrefix="detail-" />
          )}
          {props.aside({ body, onBody: setBody, problem })}
        </div>
        <ProblemView problem={problem} />
        <div class="row">
          <button type="submit">Save</button>
          <button type="button" class="secondary" onClick={props.onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}

/** Loads one item; `reload` after a change. */
function useItem<T>(load: () => Promise<Result<T>>) {
  const [item, setItem] = useState<T>();
  const [problem, setProblem] = useState<Problem>();
  const reload = useCallback(async () => {
    const reply = await load();
    setItem(reply.data);
    setProblem(reply.problem);
  }, [load]);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { item, problem, reload };
}

export function PresentationConfigPage({ id }: { id: string }) {
  const path = { params: { path: { id } } };
  const load = useCallback(() => result(api.GET('/api/verifier/config/{id}', { params: { path: { id } } })), [id]);
  const { item, problem, reload } = useItem(load);
  const [actionProblem, setActionProblem] = useState<Problem>();
  const [editing, setEditing] = useState(false);
  const [request, setRequest] = useState<{ uri?: string; session: string }>();
  const { confirm, dialog } = useConfirm();

  const remove = async () => {
    if (!(await confirm(`Delete ${id}? This cannot be undone.`, 'Delete'))) return;
    const reply = await result(api.DELETE('/api/verifier/config/{id}', path));
    setActionProblem(reply.problem);
    if (!reply.problem) location.hash = '#/presentation-configs';
  };
  const createRequest = async () => {
    const reply = await result(api.POST('/api/verifier/offer', { body: { requestId: id, response_type: 'uri' } }));
    setActionProblem(reply.problem);
    setRequest(reply.data);
  };
  const query = item?.dcql_query as DcqlQuery | undefined;
  const { id: _id, tenantId: _t, createdAt: _c, updatedAt: _u, ...editable } = item ?? ({} as NonNullable<typeof item>);

  return (
    <>
      <p>
        <a href="#/presentation-configs">Presentation configurations</a>
      </p>
      <h2>Presentation configuration {id}</h2>
      <ProblemView problem={problem ?? actionProblem} />
      {item && query && (
        <>
          {item.description && <p>{item.description}</p>}
          <div class="row">
            <button type="button" class="secondary" onClick={() => setEditing(true)}>
              Edit
            </button>
            <button type="button" onClick={createRequest}>
              Create a request
            </button>
            <button type="button" class="danger" onClick={remove}>
              Delete
            </button>
          </div>
          {request && (
            <section class="card" aria-label="presentation request">
              <h3>Request</h3>
              {request.uri && (
                <>
                  <Qr text={request.uri} label="QR code of the presentation request" />
                  <p>
                    <code data-testid="request-uri">{request.uri}</code>
                  </p>
                </>
              )}
              <p class="muted">
                Session <a href={`#/sessions/${encodeURIComponent(request.session)}`}>{request.session}</a>
              </p>
            </section>
          )}
          {editing && (
            <EditCard
              fields={FORMS.presentationConfigUpdate.fields}
              initial={editable}
              aside={(props) => <DcqlBuilder {...props} />}
              save={(body) =>
                result(api.PATCH('/api/verifier/config/{id}', { ...path, body: asBody('/api/verifier/config/{id}', 'patch', body) }))
              }
              onSaved={() => {
                setEditing(false);
                void reload();
              }}
              onCancel={() => setEditing(false)}
            />
          )}
          <section class="card">
            <h3>Credentials</h3>
            <Table
              label="credentials"
              rows={query.credentials}
              columns={[
                { title: 'Id', cell: (c) => <code class="id">{c.id}</code> },
                { title: 'Format', cell: (c) => c.format },
                { title: 'Type', cell: (c) => typeOf(c) },
                {
                  title: 'Claims',
                  cell: (c) =>
                    c.claims?.length ? (
                      <ul>
                        {c.claims.map((claim, i) => (
                          <li key={i}>{claimText(claim)}</li>
                        ))}
                      </ul>
                    ) : (
                      'all'
                    ),
                },
                {
                  title: 'Trusted authorities',
                  cell: (c) =>
                    (c.trusted_authorities ?? []).map((a, i) => (
                      <div key={i}>
                        {a.type}: <code>{a.values.join(', ')}</code>
                      </div>
                    )),
                },
                { title: 'Multiple', cell: (c) => (c.multiple ? 'yes' : 'no') },
              ]}
            />
            <h3>Credential sets</h3>
            {query.credential_sets?.length ? (
              <ul>
                {query.credential_sets.map((set, i) => (
                  <li key={i}>
                    {set.required === false ? 'optional' : 'required'}: one of {set.options.map((o) => o.join(' + ')).join(' | ')}
                  </li>
                ))}
              </ul>
            ) : (
              <p class="muted">None: every credential is requested.</p>
            )}
          </section>
          <details class="card">
            <summary>JSON</summary>
            <JsonBlock value={item} label="presentation configuration JSON" />
          </details>
        </>
      )}
      {dialog}
    </>
  );
}

export function TrustListPage({ id }: { id: string }) {
  const path = { params: { path: { id } } };
  const load = useCallback(() => result(api.GET('/api/trust-list/{id}', { params: { path: { id } } })), [id]);
  const { item, problem, reload } = useItem(load);
  const [versions, setVersions] = useState<{ sequenceNumber: number; createdAt: string; entityConfig: unknown[] }[]>();
  const [actionProblem, setActionProblem] = useState<Problem>();
  const [editing, setEditing] = useState(false);
  const chains = useKeyChains();
  const { confirm, dialog } = useConfirm();
  useEffect(() => {
    void result(api.GET('/api/trust-list/{id}/versions', { params: { path: { id } } })).then(({ data }) => setVersions(data));
  }, [id, item]);

  const remove = async () => {
    if (!(await confirm(`Delete ${id} and its versions? This cannot be undone.`, 'Delete'))) return;
    const reply = await result(api.DELETE('/api/trust-list/{id}', path));
    setActionProblem(reply.problem);
    if (!reply.problem) location.hash = '#/trust-lists';
  };
  const [published, setPublished] = useState<string>();
  useEffect(() => {
    void publishedUrl(session()?.tenantId ?? '', 'trust-lists', id).then(setPublished);
  }, [id]);

  return (
    <>
      <p>
        <a href="#/trust-lists">Trust lists</a>
      </p>
      <h2>Trust list {id}</h2>
      <ProblemView problem={problem ?? actionProblem} />
      {item && (
        <>
          {item.description && <p>{item.description}</p>}
          <dl class="facts">
            <dt>Published at</dt>
            <dd>
              {published && (
                <a href={published} data-testid="published-url">
                  {published}
                </a>
              )}
            </dd>
            <dt>Signing key chain</dt>
            <dd>
              <code>{item.keyChainId}</code>
            </dd>
            <dt>Sequence number</dt>
            <dd>{item.sequenceNumber}</dd>
            <dt>Updated</dt>
            <dd>{formatDate(item.updatedAt)}</dd>
          </dl>
          <div class="row">
            <button type="button" class="secondary" onClick={() => setEditing(true)}>
              Edit
            </button>
            <button type="button" class="danger" onClick={remove}>
              Delete
            </button>
          </div>
          {editing && (
            <EditCard
              fields={FORMS.trustListUpdate.fields}
              initial={{ description: item.description, data: item.data, entities: item.entityConfig, keyChainId: item.keyChainId }}
              aside={(props) => <TrustEntitiesEditor {...props} />}
              save={(body) => result(api.PUT('/api/trust-list/{id}', { ...path, body: asBody('/api/trust-list/{id}', 'put', body) }))}
              onSaved={() => {
                setEditing(false);
                void reload();
              }}
              onCancel={() => setEditing(false)}
            />
          )}
          <section class="card">
            <h3>Entities</h3>
            <Table
              label="entities"
              rows={item.entityConfig}
              columns={[
                {
                  title: 'Entity',
                  cell: (e) => e.name ?? <span class="muted">the key chain's organization</span>,
                },
                { title: 'Kind', cell: (e) => (e.type === 'internal' ? `key chain ${e.keyChainId}` : 'external') },
                { title: 'Service type', cell: (e) => e.serviceType ?? 'default' },
                {
                  title: 'Certificates',
                  cell: (e) => {
                    const chain = e.type === 'internal' ? chains.find((k) => k.id === e.keyChainId) : undefined;
                    const pems = e.type === 'external' ? e.certificates : chain ? [chain.rootCertificate ?? chain.activeCertificate] : [];
                    return pems.map((pem) => <CertificateDetails key={pem} pem={pem} />);
                  },
                },
              ]}
            />
          </section>
          <section class="card">
            <h3>Versions</h3>
            <Table
              label="versions"
              rows={versions ?? []}
              columns={[
                { title: 'Sequence number', cell: (v) => v.sequenceNumber },
                { title: 'Signed', cell: (v) => formatDate(v.createdAt) },
                { title: 'Entities', cell: (v) => v.entityConfig.length },
              ]}
            />
          </section>
          <details class="card">
            <summary>JSON</summary>
            <JsonBlock value={item} label="trust list JSON" />
          </details>
        </>
      )}
      {dialog}
    </>
  );
}
