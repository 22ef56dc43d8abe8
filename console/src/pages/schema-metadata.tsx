// Schema metadata at the tenant's registrar (TS11, experimental). registrar:manage publishes (a new id,
// or a new version of one the tenant published), lists what the tenant published and deprecates a
// version; registrar:manage and issuance:manage read the registrar's catalog and an id's versions;
// presentation:manage turns schema metadata (from a URL or as a signed JWT) or another issuer's
// metadata into a DCQL query. Each section shows only for the roles its routes take.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, asBody, holds, type ListItem, type Problem, result, session } from '../api.js';
import { ProblemView, saveAs, Table } from '../components.js';
import { FORMS } from '../forms.js';
import { OperationForm } from './operation-form.js';

type Record = ListItem<'/api/schema-metadata'>;

const PUBLISH_TEMPLATE = {
  config: {
    version: '1.0.0',
    nameHint: 'staff-badge',
    attestationLoS: 'iso_18045_moderate',
    bindingType: 'key',
    category: 'employment',
    schemaURIs: [
      {
        formatIdentifier: 'dc+sd-jwt',
        meta: { vct: 'urn:example:staff-badge:1' },
        schemaContent: {
          type: 'object',
          properties: { given_name: { type: 'string' }, family_name: { type: 'string' } },
          required: ['given_name', 'family_name'],
        },
      },
    ],
  },
};

/** 1.2.3 -> 1.3.0: the next minor version (a prerelease or build suffix is dropped). */
export function nextVersion(version: string): string {
  const [major = '1', minor = '0'] = version.split(/[.+-]/);
  return `${major}.${Number(minor) + 1}.0`;
}

/** A new version of `latest` (the newest version of an id), as publish-version takes it: its schemas carried over. */
function versionTemplate(latest: Record) {
  return {
    config: {
      id: latest.id,
      version: nextVersion(latest.version),
      attestationLoS: latest.attestationLoS,
      bindingType: latest.bindingType,
      schemaURIs: latest.schemaURIs.map(({ formatIdentifier, uri, schemaContent, meta, integrity }) =>
        Object.fromEntries(Object.entries({ formatIdentifier, uri, schemaContent, meta, integrity }).filter(([, v]) => v != null)),
      ),
    },
  };
}

/** Deprecating `record`: superseded by the newest version of its id when that is another; taking a deprecation back. */
function deprecationTemplate(record: Record, latest: Record[]) {
  if (record.deprecated) return { deprecated: false };
  const newest = latest.find((l) => l.id === record.id);
  return {
    deprecated: true,
    message: 'no longer maintained',
    ...(newest && newest.version !== record.version && { supersededByVersion: newest.version }),
  };
}

/** The newest version of each id. */
function latestOfEach(records: Record[]): Record[] {
  const newest = new Map<string, Record>();
  for (const r of records) {
    const seen = newest.get(r.id);
    if (!seen || (r.issuedAt ?? '') > (seen.issuedAt ?? '')) newest.set(r.id, r);
  }
  return [...newest.values()];
}

const recordColumns = [
  { title: 'Id', cell: (r: Record) => <code class="id">{r.id}</code> },
  { title: 'Version', cell: (r: Record) => r.version },
  { title: 'Formats', cell: (r: Record) => (r.supportedFormats ?? []).join(', ') },
  { title: 'Level of security', cell: (r: Record) => r.attestationLoS },
  {
    title: 'Deprecated',
    cell: (r: Record) => (r.deprecated ? `yes${r.supersededByVersion ? `, by ${r.supersededByVersion}` : ''}` : 'no'),
  },
];

export function SchemaMetadataPage() {
  const who = session();
  const publishes = holds(who, ['registrar:manage']);
  const reads = holds(who, ['registrar:manage', 'issuance:manage']);
  const imports = holds(who, ['presentation:manage']);
  return (
    <>
      <h2>Schema metadata</h2>
      <p class="muted">Schema metadata (TS11, an experimental specification) lives at the tenant's registrar.</p>
      {publishes && <Publishing />}
      {reads && <Catalog />}
      {imports && <Importing />}
    </>
  );
}

/**
 * The API's 404 for a tenant that has no registrar configured yet: the normal state of a new tenant,
 * not an error, so the page explains how to connect one instead of showing the problem.
 */
const isNoRegistrar = (problem: Problem) => problem.status === 404 && /^registrar configuration of tenant /.test(problem.detail ?? '');

function NoRegistrar() {
  return (
    <section class="card" aria-label="no registrar">
      <h3>No registrar connected</h3>
      <p>
        This tenant has no registrar yet. Schema metadata is published to, and read from, the tenant's registrar: connect one on the{' '}
        <a href="#/registrar">Registrar</a> page, or with <code>POST /api/registrar/config</code> (the registrar's URL, its OpenID provider,
        and the tenant's login there), as a client with the role <code>registrar:manage</code>.
      </p>
    </section>
  );
}

function Publishing() {
  const [mine, setMine] = useState<Record[]>([]);
  const [problem, setProblem] = useState<Problem>();
  const [deprecating, setDeprecating] = useState<Record>();
  const [classifying, setClassifying] = useState<Record>();
  const load = useCallback(async () => {
    const { data, problem } = await result(api.GET('/api/schema-metadata/mine'));
    setMine(data ?? []);
    setProblem(problem);
  }, []);
  useEffect(() => {
    void load();
  }, [load]);
  const latest = latestOfEach(mine);
  if (problem && isNoRegistrar(problem)) return <NoRegistrar />;

  return (
    <>
      <section class="card" aria-label="published by this tenant">
        <h3>Published by this tenant</h3>
        <ProblemView problem={problem} />
        <Table
          label="schema metadata published by this tenant"
          rows={mine}
          empty="Nothing published yet."
          columns={[
            ...recordColumns,
            {
              title: 'Actions',
              actions: true,
              cell: (r) => (
                <div class="row actions">
                  <button
                    type="button"
                    class="secondary"
                    aria-label={`Category and tags of ${r.id} ${r.version}`}
                    onClick={() => setClassifying(r)}
                  >
                    Category and tags
                  </button>
                  <button
                    type="button"
                    class={r.deprecated ? 'secondary' : 'danger'}
                    aria-label={`${r.deprecated ? 'Undo deprecation of' : 'Deprecate'} ${r.id} ${r.version}`}
                    onClick={() => setDeprecating(r)}
                  >
                    {r.deprecated ? 'Undo deprecation' : 'Deprecate'}
                  </button>
                </div>
              ),
            },
          ]}
        />
      </section>
      {deprecating && (
        <OperationForm
          key={`${deprecating.id}@${deprecating.version}`}
          title={`Deprecation of ${deprecating.id} ${deprecating.version}`}
          fields={FORMS.schemaMetadataDeprecation.fields}
          template={deprecationTemplate(deprecating, latest)}
          confirm={`Change the deprecation of ${deprecating.id} ${deprecating.version} at the registrar? Wallets and verifiers see it at once.`}
          submitLabel="Save deprecation"
          submit={(body) =>
            result(
              api.PATCH('/api/schema-metadata/{id}/versions/{version}/deprecation', {
                params: { path: { id: deprecating.id, version: deprecating.version } },
                body: asBody('/api/schema-metadata/{id}/versions/{version}/deprecation', 'patch', body),
              }),
            )
          }
          done={(data) => {
            const r = data as Record;
            return `${r.id} ${r.version} is ${r.deprecated ? 'deprecated' : 'no longer deprecated'}`;
          }}
          onDone={() => void load()}
        />
      )}
      {classifying && (
        <OperationForm
          key={`${classifying.id}@${classifying.version}`}
          title={`Category and tags of ${classifying.id} ${classifying.version}`}
          intro={<p class="muted">Catalog attributes the registrar keeps beside the signed metadata; they are not signed.</p>}
          fields={FORMS.schemaMetadataClassification.fields}
          template={{ category: classifying.category ?? 'other', tags: classifying.tags ?? [] }}
          submitLabel="Save category and tags"
          submit={(body) =>
            result(
              api.PATCH('/api/schema-metadata/{id}/versions/{version}', {
                params: { path: { id: classifying.id, version: classifying.version } },
                body: asBody('/api/schema-metadata/{id}/versions/{version}', 'patch', body),
              }),
            )
          }
          done={(data) => `Saved the category and tags of ${(data as Record).id} ${(data as Record).version}`}
          onDone={() => void load()}
        />
      )}
      <OperationForm
        title="Publish new schema metadata"
        intro={<p class="muted">The registrar reserves an id; the payload is signed with the tenant's default access key chain.</p>}
        fields={FORMS.schemaMetadataPublish.fields}
        template={PUBLISH_TEMPLATE}
        submitLabel="Publish"
        submit={(body) => result(api.POST('/api/schema-metadata/publish', { body: asBody('/api/schema-metadata/publish', 'post', body) }))}
        done={(data) => `Published ${(data as Record).id} ${(data as Record).version}`}
        onDone={() => void load()}
        showAnswer
      />
      {latest[0] && (
        <OperationForm
          title="Publish a new version"
          fields={FORMS.schemaMetadataPublishVersion.fields}
          template={versionTemplate(latest[0])}
          submitLabel="Publish version"
          submit={(body) =>
            result(api.POST('/api/schema-metadata/publish-version', { body: asBody('/api/schema-metadata/publish-version', 'post', body) }))
          }
          done={(data) => `Published ${(data as Record).id} ${(data as Record).version}`}
          onDone={() => void load()}
          showAnswer
        />
      )}
    </>
  );
}

/** A version's signed JWT and its JSON Schema per format, as files. */
function RecordFiles({ record }: { record: Record }) {
  const [problem, setProblem] = useState<Problem>();
  const path = { id: record.id, version: record.version };
  const name = `${record.id}-${record.version}`;
  const jwt = async () => {
    const { data, problem } = await result(
      api.GET('/api/schema-metadata/{id}/versions/{version}/jwt', { params: { path }, parseAs: 'text' }),
    );
    setProblem(problem);
    if (typeof data === 'string') saveAs(data, `${name}.jwt`, 'application/jwt');
  };
  const schema = async (format: 'dc+sd-jwt' | 'mso_mdoc') => {
    const { data, problem } = await result(
      api.GET('/api/schema-metadata/{id}/versions/{version}/schemas/{format}', { params: { path: { ...path, format } } }),
    );
    setProblem(problem);
    if (data) saveAs(JSON.stringify(data, null, 2), `${name}-${format}.schema.json`, 'application/schema+json');
  };
  const formats = (record.supportedFormats ?? []).filter((f): f is 'dc+sd-jwt' | 'mso_mdoc' => f === 'dc+sd-jwt' || f === 'mso_mdoc');
  return (
    <div class="downloads">
      <button type="button" class="secondary" aria-label={`Download the JWT of ${record.id} ${record.version}`} onClick={jwt}>
        JWT
      </button>
      {formats.map((format) => (
        <button
          type="button"
          class="secondary"
          key={format}
          aria-label={`Download the ${format} schema of ${record.id} ${record.version}`}
          onClick={() => schema(format)}
        >
          Schema ({format})
        </button>
      ))}
      <ProblemView problem={problem} />
    </div>
  );
}

type Vocabularies = NonNullable<Awaited<ReturnType<typeof loadVocabularies>>['data']>;
const loadVocabularies = () => result(api.GET('/api/schema-metadata/vocabularies'));

/** The categories and tags the registrar accepts, with those it deprecated. */
function VocabularyList({ vocabularies }: { vocabularies: Vocabularies }) {
  const entries = (title: string, list: Vocabularies['categories']) => (
    <>
      <h4>{title}</h4>
      <ul class="vocabulary">
        {list.map((e) => (
          <li key={e.code}>
            <code>{e.code}</code> {e.label}
            {e.status !== 'active' && (
              <span class="muted">
                {' '}
                ({e.status}
                {e.replacedBy ? `, use ${e.replacedBy}` : ''})
              </span>
            )}
          </li>
        ))}
      </ul>
    </>
  );
  return (
    <details>
      <summary>Categories and tags the registrar accepts (vocabulary {vocabularies.version})</summary>
      {entries('Categories', vocabularies.categories)}
      {entries('Tags', vocabularies.tags)}
    </details>
  );
}

function Catalog() {
  const [records, setRecords] = useState<Record[]>([]);
  const [problem, setProblem] = useState<Problem>();
  const [versions, setVersions] = useState<{ id: string; records: Record[] }>();
  const [vocabularies, setVocabularies] = useState<Vocabularies>();
  useEffect(() => {
    void loadVocabularies().then(({ data }) => setVocabularies(data));
  }, []);
  const [query, setQuery] = useState({ attestationId: '', version: '' });
  // The registrar looks up one id (and version) itself; empty: the whole catalog.
  const search = useCallback(async (q: { attestationId: string; version: string }) => {
    const params = { query: { attestationId: q.attestationId.trim() || undefined, version: q.version.trim() || undefined } };
    const { data, problem } = await result(api.GET('/api/schema-metadata', { params }));
    setRecords(data ?? []);
    setProblem(problem);
  }, []);
  useEffect(() => {
    void search({ attestationId: '', version: '' });
  }, [search]);
  const typed = (key: 'attestationId' | 'version') => (e: Event) => setQuery({ ...query, [key]: (e.target as HTMLInputElement).value });
  const showVersions = async (id: string) => {
    const { data, problem } = await result(api.GET('/api/schema-metadata/{id}/versions', { params: { path: { id } } }));
    setProblem(problem);
    setVersions(data ? { id, records: data } : undefined);
  };
  return (
    <section class="card" aria-label="The registrar's catalog">
      <h3>The registrar's catalog</h3>
      {problem && isNoRegistrar(problem) ? (
        <p class="muted">No registrar is connected to this tenant: there is no catalog to read yet.</p>
      ) : (
        <ProblemView problem={problem} />
      )}
      {vocabularies && <VocabularyList vocabularies={vocabularies} />}
      <form
        class="filters"
        aria-label="search the catalog"
        onSubmit={(e) => {
          e.preventDefault();
          void search(query);
        }}
      >
        <label>
          Attestation id
          <input value={query.attestationId} onInput={typed('attestationId')} />
        </label>
        <label>
          Version
          <input value={query.version} onInput={typed('version')} />
        </label>
        <button type="submit" class="secondary">
          Search
        </button>
      </form>
      <Table
        label="registrar catalog"
        rows={records}
        empty="The catalog is empty."
        columns={[
          ...recordColumns,
          {
            title: 'Versions',
            cell: (r) => (
              <button type="button" class="secondary" aria-label={`Versions of ${r.id}`} onClick={() => showVersions(r.id)}>
                Versions
              </button>
            ),
          },
        ]}
      />
      {versions && (
        <>
          <h4>Versions of {versions.id}</h4>
          <Table
            label={`versions of ${versions.id}`}
            rows={versions.records}
            columns={[...recordColumns, { title: 'Files', cell: (r) => <RecordFiles record={r} /> }]}
          />
        </>
      )}
    </section>
  );
}

/** The payload of a compact JWS, or undefined. */
function jwtPayload(jwt: string): { id?: unknown } | undefined {
  try {
    const part = (jwt.split('.')[1] ?? '').replace(/-/g, '+').replace(/_/g, '/');
    return JSON.parse(atob(part)) as { id?: unknown };
  } catch {
    return undefined;
  }
}

function Importing() {
  // The registrar's first entry, when there is one: the templates import it (from its URL, or as its JWT).
  const [sample, setSample] = useState<{ url?: string; jwt?: string }>({});
  useEffect(() => {
    void result(api.GET('/api/verifier/config/schema-metadata/catalog')).then(({ data }) => {
      const first = (data ?? []).find((e): e is { signedJwt: string } => typeof (e as { signedJwt?: unknown })?.signedJwt === 'string');
      if (!first) return;
      const id = jwtPayload(first.signedJwt)?.id;
      setSample({ jwt: first.signedJwt, url: typeof id === 'string' && /^https?:/.test(id) ? id : undefined });
    });
  }, []);
  const tenantId = session()?.tenantId ?? '';
  const resolved = (data: unknown) => {
    const credentials = (data as { dcql_query?: { credentials?: unknown[] } }).dcql_query?.credentials?.length ?? 0;
    return `Resolved: a DCQL query of ${credentials} credential${credentials === 1 ? '' : 's'} (below)`;
  };
  return (
    <>
      <h3>Import into a presentation configuration</h3>
      <p class="muted">The answer holds a DCQL query to copy into a presentation configuration.</p>
      <OperationForm
        title="Schema metadata from a URL"
        fields={FORMS.schemaMetadataResolveUrl.fields}
        template={{ schemaMetadataUrl: sample.url ?? 'https://registrar.example/schema-metadata/staff-badge' }}
        submitLabel="Resolve URL"
        submit={(body) =>
          result(
            api.POST('/api/verifier/config/schema-metadata/resolve', {
              body: asBody('/api/verifier/config/schema-metadata/resolve', 'post', body),
            }),
          )
        }
        done={resolved}
        showAnswer
      />
      <OperationForm
        title="Schema metadata as a signed JWT"
        fields={FORMS.schemaMetadataResolveJwt.fields}
        template={{ signedJwt: sample.jwt ?? '' }}
        submitLabel="Resolve JWT"
        submit={(body) =>
          result(
            api.POST('/api/verifier/config/schema-metadata/resolve-jwt', {
              body: asBody('/api/verifier/config/schema-metadata/resolve-jwt', 'post', body),
            }),
          )
        }
        done={resolved}
        showAnswer
      />
      <OperationForm
        title="Another issuer's metadata"
        fields={FORMS.issuerMetadataResolve.fields}
        template={{ credentialIssuer: `${location.origin}/issuers/${encodeURIComponent(tenantId)}` }}
        submitLabel="Resolve issuer"
        submit={(body) =>
          result(
            api.POST('/api/verifier/config/issuer-metadata/resolve', {
              body: asBody('/api/verifier/config/issuer-metadata/resolve', 'post', body),
            }),
          )
        }
        done={(data) => {
          const n = (data as { credentialConfigurations?: unknown[] }).credentialConfigurations?.length ?? 0;
          return `Resolved: ${n} credential configuration${n === 1 ? '' : 's'} (below)`;
        }}
        showAnswer
      />
    </>
  );
}
