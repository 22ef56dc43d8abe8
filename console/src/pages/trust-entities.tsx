// The entities of a trust list as a list editor beside its JSON: one row per entity, either one of
// the tenant's key chains (internal: the service takes its certificate) or an entity outside the
// service given by certificates, read from PEM or DER files in the browser and shown as a person
// checks them (subject, issuer, expiry, SHA-256 fingerprint). Both views edit the same JSON text;
// keys the rows do not show (information) stay in it. A 400 naming `body.entities.N…` is shown on row N.
import { useEffect, useState } from 'preact/hooks';
import { api, type ListItem, type Problem, result } from '../api.js';
import { certificatesPem, sha256Fingerprint, summarizeChain } from '../certificates.js';
import { DraftInput, FieldErrors, inputValue, parsedJson } from '../components.js';
import { errorsAt, LabelledField } from './labelled-field.js';

/** ServiceTypeInput of src/trust-lists/schemas.ts. */
const SERVICE_TYPES = ['issuance', 'revocation', 'pidIssuance', 'pidRevocation', 'walletIssuance', 'walletRevocation'];

type KeyChain = ListItem<'/api/key-chain'>;
interface Entity {
  type: 'internal' | 'external';
  keyChainId?: string;
  name?: string;
  certificates?: string[];
  serviceType?: string;
  [other: string]: unknown;
}

export function useKeyChains(): KeyChain[] {
  const [chains, setChains] = useState<KeyChain[]>([]);
  useEffect(() => {
    void result(api.GET('/api/key-chain')).then(({ data }) => setChains(data ?? []));
  }, []);
  return chains;
}

export function TrustEntitiesEditor({ body, onBody, problem }: { body: string; onBody: (text: string) => void; problem?: Problem }) {
  const chains = useKeyChains();
  const parsed = parsedJson(body)?.value as { entities?: Entity[] } | undefined;
  if (!parsed || typeof parsed !== 'object' || !Array.isArray(parsed.entities)) {
    return <p class="muted">The entity rows show once the JSON parses and its entities is a list.</p>;
  }
  const entities = parsed.entities;
  const write = (next: Entity[]) => onBody(JSON.stringify({ ...parsed, entities: next }, null, 2));
  const change = (index: number, next: Entity) => write(entities.map((e, i) => (i === index ? withoutUndefined(next) : e)));
  const firstChain = chains[0]?.id ?? 'default-attestation';

  return (
    <section class="fields-form trust-entities" aria-label="trusted entity rows">
      <h4>Trusted entity rows</h4>
      {entities.length === 0 && <p class="muted">No entity yet.</p>}
      {entities.map((entity, index) => (
        <EntityRow
          key={index}
          index={index}
          entity={entity}
          chains={chains}
          onChange={(next) => change(index, next)}
          onRemove={() => write(entities.filter((_, i) => i !== index))}
          problem={problem}
        />
      ))}
      <div class="row">
        <button type="button" class="secondary" onClick={() => write([...entities, { type: 'internal', keyChainId: firstChain }])}>
          Add key chain entity
        </button>
        <button type="button" class="secondary" onClick={() => write([...entities, { type: 'external', name: '', certificates: [] }])}>
          Add external entity
        </button>
      </div>
    </section>
  );
}

function EntityRow(props: {
  index: number;
  entity: Entity;
  chains: KeyChain[];
  onChange: (next: Entity) => void;
  onRemove: () => void;
  problem?: Problem;
}) {
  const { entity, chains, onChange } = props;
  const n = props.index + 1;
  const [fileProblem, setFileProblem] = useState<string>();
  const set = (patch: Partial<Entity>) => onChange({ ...entity, ...patch });
  const certificates = entity.certificates ?? [];
  const chain = chains.find((k) => k.id === entity.keyChainId);
  const errors = errorsAt(props.problem, `body.entities.${props.index}`);
  const addFiles = async (files: FileList | null) => {
    const added: string[] = [];
    for (const file of Array.from(files ?? [])) {
      const pems = certificatesPem(new Uint8Array(await file.arrayBuffer()));
      // A file that holds no readable certificate is named, not sent to the service.
      if (pems.some((pem) => summarizeChain(pem).length === 0)) {
        setFileProblem(`${file.name} is not a PEM or DER certificate`);
        return;
      }
      added.push(...pems);
    }
    setFileProblem(undefined);
    set({ certificates: [...certificates, ...added] });
  };

  return (
    <fieldset class="field-row entity-row">
      <legend>
        Entity {n}
        {entity.name ? `: ${entity.name}` : entity.keyChainId ? `: ${entity.keyChainId}` : ''}
      </legend>
      <LabelledField
        label={`Entity ${n} kind`}
        control={(a) => (
          <select
            {...a}
            value={entity.type}
            onChange={(e) => {
              const type = inputValue(e) as Entity['type'];
              const { keyChainId: _k, certificates: _c, ...rest } = entity;
              onChange(
                type === 'internal'
                  ? { ...rest, type, keyChainId: chains[0]?.id ?? '' }
                  : { ...rest, type, name: entity.name ?? '', certificates: [] },
              );
            }}
          >
            <option value="internal">key chain of this tenant</option>
            <option value="external">external (certificates)</option>
          </select>
        )}
      />
      <LabelledField
        label={`Entity ${n} name`}
        hint={entity.type === 'internal' ? "empty: the key chain's organization" : undefined}
        control={(a) => <DraftInput {...a} value={entity.name ?? ''} onCommit={(text) => set({ name: text || undefined })} />}
      />
      <LabelledField
        label={`Entity ${n} service type`}
        control={(a) => (
          <select {...a} value={entity.serviceType ?? ''} onChange={(e) => set({ serviceType: inputValue(e) || undefined })}>
            <option value="">default</option>
            {SERVICE_TYPES.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        )}
      />
      {entity.type === 'internal' ? (
        <>
          <LabelledField
            label={`Entity ${n} key chain`}
            control={(a) => (
              <select {...a} value={entity.keyChainId ?? ''} onChange={(e) => set({ keyChainId: inputValue(e) })}>
                {[...new Set([...chains.map((k) => k.id), entity.keyChainId ?? ''])].map((id) => (
                  <option key={id} value={id}>
                    {id}
                  </option>
                ))}
              </select>
            )}
          />
          {chain && <CertificateDetails pem={chain.rootCertificate ?? chain.activeCertificate} />}
        </>
      ) : (
        <>
          <ul class="certificates">
            {certificates.map((pem, i) => (
              <li key={pem}>
                <CertificateDetails pem={pem} />
                <button type="button" class="danger" onClick={() => set({ certificates: certificates.filter((_, j) => j !== i) })}>
                  Remove entity {n} certificate {i + 1}
                </button>
              </li>
            ))}
          </ul>
          <LabelledField
            label={`Entity ${n} certificate file`}
            hint="PEM or DER; each certificate is added to the entity"
            control={(a) => (
              <input
                {...a}
                type="file"
                accept=".pem,.crt,.cer,.der"
                multiple
                onChange={(e) => addFiles((e.target as HTMLInputElement).files)}
              />
            )}
          />
          {fileProblem && (
            <span class="field-error" role="alert">
              {fileProblem}
            </span>
          )}
        </>
      )}
      <FieldErrors errors={errors} />
      <button type="button" class="danger" onClick={props.onRemove}>
        Remove entity {n}
      </button>
    </fieldset>
  );
}

/** What a person checks of a certificate: who it names, who signed it, until when, and its fingerprint. */
export function CertificateDetails({ pem }: { pem: string }) {
  const [fingerprint, setFingerprint] = useState<string>();
  useEffect(() => {
    void sha256Fingerprint(pem).then(setFingerprint, () => setFingerprint(undefined));
  }, [pem]);
  const [summary] = summarizeChain(pem);
  if (!summary) return <span class="field-error">not a readable certificate</span>;
  const expired = summary.notAfter.getTime() < Date.now();
  return (
    <dl class="certificate" data-testid="certificate-details">
      <dt>Subject</dt>
      <dd>{summary.subject}</dd>
      <dt>Issuer</dt>
      <dd>{summary.issuer}</dd>
      <dt>Expires</dt>
      <dd class={expired ? 'field-error' : undefined}>
        {summary.notAfter.toLocaleDateString()}
        {expired ? ' (expired)' : ''}
      </dd>
      <dt>SHA-256</dt>
      <dd>
        <code class="fingerprint">{fingerprint ?? '…'}</code>
      </dd>
    </dl>
  );
}

const withoutUndefined = (entity: Entity) => Object.fromEntries(Object.entries(entity).filter(([, v]) => v !== undefined)) as Entity;
