// The DCQL query of a presentation configuration as a form (OpenID4VP 1.0 section 6): credential
// queries (id, format, multiple, meta: vct_values for SD-JWT VC, doctype_value for mdoc), their
// claims (a path; for mdoc namespace and element, intent_to_retain), claim_sets, trusted_authorities,
// and the query's credential_sets. It edits the same JSON text as the JSON view beside it, so each
// shows the other's changes at once; keys the form does not know stay in the JSON untouched (the
// form spreads every object it changes). A 400 naming `body.dcql_query.…` is shown on its field.
import { useEffect, useState } from 'preact/hooks';
import { api, type Problem, publishedUrl, result, session } from '../api.js';
import { summarizeChain } from '../certificates.js';
import { checked, DraftInput, FieldErrors, inputValue, parsedJson } from '../components.js';
import { DcqlCheck } from './dcql-check.js';
import { parsePath, pathText } from './fields-form.js';
import { errorsAt, LabelledField } from './labelled-field.js';

/** The formats the service verifies (src/formats: SUPPORTED_FORMATS). */
const FORMATS = ['dc+sd-jwt', 'mso_mdoc'];
const AUTHORITY_TYPES = ['aki', 'etsi_tl', 'openid_federation'] as const;
/** What the values of each authority type are (OpenID4VP 1.0 section 6.1.1.1). */
const AUTHORITY_VALUES = new Map([
  ['aki', 'base64url key identifiers'],
  ['etsi_tl', 'trusted list URLs'],
  ['openid_federation', 'trust anchor entity ids'],
]);
const QUERY = 'body.dcql_query';

type Json = Record<string, unknown>;
type PathSegment = string | number | null;
interface ClaimQuery extends Json {
  id?: string;
  path: PathSegment[];
  values?: unknown[];
  intent_to_retain?: boolean;
}
interface Authority extends Json {
  type: string;
  values: string[];
}
interface CredentialQuery extends Json {
  id: string;
  format: string;
  multiple?: boolean;
  meta?: Json;
  claims?: ClaimQuery[];
  claim_sets?: string[][];
  trusted_authorities?: Authority[];
}
interface CredentialSet extends Json {
  options: string[][];
  required?: boolean;
}
interface Query extends Json {
  credentials: CredentialQuery[];
  credential_sets?: CredentialSet[];
}

/** The keys of a credential query the form edits; the others are listed as kept in the JSON. */
const CREDENTIAL_KEYS = new Set(['id', 'format', 'multiple', 'meta', 'claims', 'claim_sets', 'trusted_authorities']);

/** `a, b; c` <-> [["a", "b"], ["c"]]: the options of a set (or the claim sets), preferred first. */
export const optionsText = (options?: string[][]) => (options ?? []).map((o) => o.join(', ')).join('; ');
export const parseOptions = (text: string) =>
  text
    .split(';')
    .map((o) => splitList(o))
    .filter((o) => o.length > 0);
const splitList = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
/** Claim values as typed: JSON where an item parses (numbers, booleans), the plain text otherwise. */
const valuesText = (values?: unknown[]) => (values ?? []).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ');
const parseValues = (text: string) => splitList(text).map((item) => parsedJson(item)?.value ?? item);

/** An object without the keys set to undefined (or to an empty list where `dropEmpty`). */
function compact<T extends Json>(value: T, dropEmpty: string[] = []): T {
  const kept = Object.entries(value).filter(
    ([key, v]) => v !== undefined && !(dropEmpty.includes(key) && Array.isArray(v) && v.length === 0) && !(key === 'meta' && isEmpty(v)),
  );
  return Object.fromEntries(kept) as T;
}
const isEmpty = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0;

/** The values the tenant offers per authority type: key chains' AKIs, its trust lists' URLs, its federation's anchors. */
interface AuthorityChoice {
  value: string;
  label: string;
}
function useAuthorityChoices(): Map<string, AuthorityChoice[]> {
  const [choices, setChoices] = useState(new Map<string, AuthorityChoice[]>());
  useEffect(() => {
    const tenantId = session()?.tenantId ?? '';
    // Each list needs its own role: one the client lacks (403) offers nothing, and the others still come.
    void Promise.all([result(api.GET('/api/key-chain')), result(api.GET('/api/trust-list')), result(api.GET('/api/trust-config'))]).then(
      async ([chains, lists, trust]) => {
        const akis = (chains.data ?? []).flatMap((k) => {
          const aki = summarizeChain(k.activeCertificate)[0]?.authorityKeyId;
          return aki ? [{ value: aki, label: `key chain ${k.id}` }] : [];
        });
        const published = await Promise.all(
          (lists.data ?? []).map(async (l) => ({ value: await publishedUrl(tenantId, 'trust-lists', l.id), label: `trust list ${l.id}` })),
        );
        const anchors = (trust.data?.federation?.trustAnchors ?? []).map((a) => ({ value: a.entityId, label: a.entityId }));
        setChoices(
          new Map([
            ['aki', akis],
            ['etsi_tl', published],
            ['openid_federation', anchors],
          ]),
        );
      },
    );
  }, []);
  return choices;
}

export function DcqlBuilder({ body, onBody, problem }: { body: string; onBody: (text: string) => void; problem?: Problem }) {
  const choices = useAuthorityChoices();
  const parsed = parsedJson(body)?.value as Json | undefined;
  const query = parsed?.dcql_query as Query | undefined;
  if (!parsed || typeof parsed !== 'object' || !query || typeof query !== 'object' || !Array.isArray(query.credentials)) {
    return (
      <section class="dcql-builder" aria-label="query builder">
        <p class="muted">The query builder shows once the JSON parses and its dcql_query has a credentials list.</p>
        <DcqlCheck body={body} />
      </section>
    );
  }
  const write = (next: Query) => onBody(JSON.stringify({ ...parsed, dcql_query: compact(next, ['credential_sets']) }, null, 2));
  const credentials = query.credentials;
  const setCredential = (index: number, next: CredentialQuery) =>
    write({
      ...query,
      credentials: credentials.map((c, i) => (i === index ? compact(next, ['claims', 'claim_sets', 'trusted_authorities']) : c)),
    });
  const removeCredential = (index: number) => write({ ...query, credentials: credentials.filter((_, i) => i !== index) });
  const addCredential = () =>
    write({
      ...query,
      credentials: [
        ...credentials,
        { id: `credential_${credentials.length + 1}`, format: 'dc+sd-jwt', meta: { vct_values: [] }, claims: [] },
      ],
    });
  const sets = query.credential_sets ?? [];
  const setSets = (next: CredentialSet[]) => write({ ...query, credential_sets: next });

  return (
    <section class="dcql-builder" aria-label="query builder">
      <h4>Query builder</h4>
      <DcqlCheck body={body} />
      {credentials.map((credential, index) => (
        <CredentialEditor
          key={index}
          index={index}
          credential={credential}
          onChange={(next) => setCredential(index, next)}
          onRemove={() => removeCredential(index)}
          problem={problem}
          choices={choices}
        />
      ))}
      <button type="button" class="secondary" onClick={addCredential}>
        Add credential
      </button>
      <fieldset class="field-row">
        <legend>Credential sets</legend>
        {sets.length === 0 && <p class="muted">None: every credential is requested.</p>}
        {sets.map((set, index) => (
          <div class="row" key={index}>
            <LabelledField
              label={`Set ${index + 1} options`}
              hint="credential ids, comma-separated; options separated by ;"
              errors={errorsAt(problem, `${QUERY}.credential_sets.${index}`)}
              control={(a) => (
                <DraftInput
                  {...a}
                  value={optionsText(set.options)}
                  onCommit={(text) => setSets(sets.map((s, i) => (i === index ? { ...s, options: parseOptions(text) } : s)))}
                />
              )}
            />
            <label class="check">
              <input
                type="checkbox"
                checked={set.required !== false}
                onChange={(e) =>
                  setSets(sets.map((s, i) => (i === index ? compact({ ...s, required: checked(e) ? undefined : false }) : s)))
                }
              />
              Set {index + 1} required
            </label>
            <button type="button" class="danger" onClick={() => setSets(sets.filter((_, i) => i !== index))}>
              Remove set {index + 1}
            </button>
          </div>
        ))}
        <button type="button" class="secondary" onClick={() => setSets([...sets, { options: [credentials.map((c) => c.id).slice(0, 1)] }])}>
          Add credential set
        </button>
      </fieldset>
    </section>
  );
}

function CredentialEditor(props: {
  index: number;
  credential: CredentialQuery;
  onChange: (next: CredentialQuery) => void;
  onRemove: () => void;
  problem?: Problem;
  choices: Map<string, AuthorityChoice[]>;
}) {
  const { index, credential, onChange, problem } = props;
  const n = index + 1;
  const at = `credentials.${index}`;
  const mdoc = credential.format === 'mso_mdoc';
  const claims = credential.claims ?? [];
  const authorities = credential.trusted_authorities ?? [];
  const set = (patch: Partial<CredentialQuery>) => onChange({ ...credential, ...patch });
  const setMeta = (patch: Json) => set({ meta: compact({ ...credential.meta, ...patch }) });
  const setClaim = (i: number, patch: Partial<ClaimQuery>) =>
    set({ claims: claims.map((c, j) => (j === i ? compact({ ...c, ...patch } as ClaimQuery) : c)) });
  const setAuthority = (i: number, patch: Partial<Authority>) =>
    set({ trusted_authorities: authorities.map((a, j) => (j === i ? { ...a, ...patch } : a)) });
  const kept = Object.keys(credential).filter((key) => !CREDENTIAL_KEYS.has(key));
  const errors = (path: string) => errorsAt(problem, `${QUERY}.${at}.${path}`);

  return (
    <fieldset class="field-row credential-query">
      <legend>
        Credential {n}: {credential.id}
      </legend>
      <LabelledField
        label={`Credential ${n} id`}
        errors={errors('id')}
        control={(a) => <DraftInput {...a} value={credential.id} onCommit={(text) => set({ id: text })} />}
      />
      <LabelledField
        label={`Credential ${n} format`}
        errors={errors('format')}
        control={(a) => (
          <select
            {...a}
            value={credential.format}
            onChange={(e) => {
              const format = inputValue(e);
              // The meta of one format means nothing to the other: the new format starts with its own.
              const meta = format === 'mso_mdoc' ? { doctype_value: '' } : format === 'dc+sd-jwt' ? { vct_values: [] } : credential.meta;
              set({ format, meta });
            }}
          >
            {[...new Set([...FORMATS, credential.format])].map((f) => (
              <option key={f}>{f}</option>
            ))}
          </select>
        )}
      />
      {credential.format === 'dc+sd-jwt' && (
        <LabelledField
          label={`Credential ${n} VCT values`}
          hint="comma-separated"
          errors={errors('meta')}
          control={(a) => (
            <DraftInput
              {...a}
              value={((credential.meta?.vct_values as string[] | undefined) ?? []).join(', ')}
              onCommit={(text) => setMeta({ vct_values: splitList(text) })}
            />
          )}
        />
      )}
      {mdoc && (
        <LabelledField
          label={`Credential ${n} doctype`}
          errors={errors('meta')}
          control={(a) => (
            <DraftInput
              {...a}
              value={(credential.meta?.doctype_value as string | undefined) ?? ''}
              onCommit={(text) => setMeta({ doctype_value: text })}
            />
          )}
        />
      )}
      <label class="check">
        <input type="checkbox" checked={credential.multiple === true} onChange={(e) => set({ multiple: checked(e) || undefined })} />
        Credential {n} multiple
      </label>
      {claims.map((claim, i) => (
        <div class="row claim-row" key={i}>
          {mdoc ? (
            <>
              <label>
                Credential {n} claim {i + 1} namespace
                <DraftInput
                  value={String(claim.path?.[0] ?? '')}
                  onCommit={(text) => setClaim(i, { path: [text, claim.path?.[1] ?? ''] })}
                />
              </label>
              <label>
                Credential {n} claim {i + 1} element
                <DraftInput
                  value={String(claim.path?.[1] ?? '')}
                  onCommit={(text) => setClaim(i, { path: [claim.path?.[0] ?? '', text] })}
                />
              </label>
            </>
          ) : (
            <label>
              Credential {n} claim {i + 1} path
              <DraftInput value={pathText(claim.path ?? [])} onCommit={(text) => setClaim(i, { path: parsePath(text) })} />
            </label>
          )}
          <label>
            Credential {n} claim {i + 1} id
            <DraftInput value={claim.id ?? ''} onCommit={(text) => setClaim(i, { id: text || undefined })} />
          </label>
          <label>
            Credential {n} claim {i + 1} values
            <DraftInput
              value={valuesText(claim.values)}
              onCommit={(text) => {
                const values = parseValues(text);
                setClaim(i, { values: values.length ? values : undefined });
              }}
            />
          </label>
          {mdoc && (
            <label class="check">
              <input
                type="checkbox"
                checked={claim.intent_to_retain === true}
                onChange={(e) => setClaim(i, { intent_to_retain: checked(e) || undefined })}
              />
              Credential {n} claim {i + 1} intent to retain
            </label>
          )}
          <button type="button" class="danger" onClick={() => set({ claims: claims.filter((_, j) => j !== i) })}>
            Remove credential {n} claim {i + 1}
          </button>
          <FieldErrors errors={errors(`claims.${i}`)} />
        </div>
      ))}
      <button
        type="button"
        class="secondary"
        onClick={() => set({ claims: [...claims, { path: mdoc ? [String(credential.meta?.doctype_value ?? ''), ''] : [''] }] })}
      >
        Add claim to credential {n}
      </button>
      <LabelledField
        label={`Credential ${n} claim sets`}
        hint="claim ids, comma-separated; sets separated by ;, preferred first"
        errors={errors('claim_sets')}
        control={(a) => (
          <DraftInput {...a} value={optionsText(credential.claim_sets)} onCommit={(text) => set({ claim_sets: parseOptions(text) })} />
        )}
      />
      {authorities.map((authority, i) => (
        <AuthorityEditor
          key={i}
          label={`Credential ${n} trusted authority ${i + 1}`}
          authority={authority}
          choices={props.choices.get(authority.type) ?? []}
          onChange={(patch) => setAuthority(i, patch)}
          onRemove={() => set({ trusted_authorities: authorities.filter((_, j) => j !== i) })}
          problem={problem}
          path={`${at}.trusted_authorities.${i}`}
        />
      ))}
      <button type="button" class="secondary" onClick={() => set({ trusted_authorities: [...authorities, { type: 'aki', values: [] }] })}>
        Add trusted authority to credential {n}
      </button>
      {kept.length > 0 && (
        <p class="muted">
          Also in the JSON, kept as it is: <code>{kept.join(', ')}</code>
        </p>
      )}
      {/* Errors on the credential itself, or on keys the form does not show. */}
      <FieldErrors
        errors={(problem?.fields ?? []).filter((f) => {
          const rest = f.field.slice(`${QUERY}.${at}`.length);
          return f.field.startsWith(`${QUERY}.${at}`) && (rest === '' || !CREDENTIAL_KEYS.has(rest.split('.')[1] ?? ''));
        })}
      />
      <button type="button" class="danger" onClick={props.onRemove}>
        Remove credential {n}
      </button>
    </fieldset>
  );
}

function AuthorityEditor(props: {
  label: string;
  authority: Authority;
  choices: AuthorityChoice[];
  onChange: (patch: Partial<Authority>) => void;
  onRemove: () => void;
  problem?: Problem;
  path: string;
}) {
  const { label, authority, choices } = props;
  const offered = choices.filter((c) => !authority.values.includes(c.value));
  return (
    <div class="row authority-row">
      <LabelledField
        label={`${label} type`}
        control={(a) => (
          <select {...a} value={authority.type} onChange={(e) => props.onChange({ type: inputValue(e), values: [] })}>
            {[...new Set([...AUTHORITY_TYPES, authority.type])].map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        )}
      />
      <LabelledField
        label={`${label} values`}
        hint={`${AUTHORITY_VALUES.get(authority.type) ?? 'values'}, comma-separated`}
        errors={errorsAt(props.problem, `${QUERY}.${props.path}`)}
        control={(a) => (
          <DraftInput {...a} value={authority.values.join(', ')} onCommit={(text) => props.onChange({ values: splitList(text) })} />
        )}
      />
      {offered.length > 0 && (
        <LabelledField
          label={`${label} add`}
          control={(a) => (
            <select
              {...a}
              value=""
              onChange={(e) => {
                const value = inputValue(e);
                if (value) props.onChange({ values: [...authority.values, value] });
              }}
            >
              <option value="">choose…</option>
              {offered.map((c) => (
                <option key={c.value} value={c.value}>
                  {c.label}
                </option>
              ))}
            </select>
          )}
        />
      )}
      <button type="button" class="danger" onClick={props.onRemove}>
        Remove {label.toLowerCase()}
      </button>
    </div>
  );
}
