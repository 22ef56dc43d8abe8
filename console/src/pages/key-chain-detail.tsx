// One key chain (#/key-chains/{id}): where its key lives (the provider: software, HSM, Vault, a KMS),
// its algorithm, each certificate of its chain (subject, issuer, not-after, SHA-256 fingerprint) with
// a warning when the leaf expires soon, its rotations (from the audit log, for roles that read it),
// the credential configurations it signs for, and the actions that apply: rotate, and for a chain
// that is not the default of its usage, make default and delete.
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/index.js';
import { api, holds, type Problem, result, session } from '../api.js';
import { type CertificateSummary, daysLeft, expiresSoon, sha256Fingerprints, summarizeChain } from '../certificates.js';
import { DeletedNotice, formatDate, ProblemView, Table, useConfirm } from '../components.js';
import { KeyChainDownloads } from './key-chain-downloads.js';

type KeyChain = components['schemas']['KeyChain'];
type AuditEntry = components['schemas']['AuditLogEntry'];

/** What each provider type is, in an operator's words. */
const PROVIDER_KINDS = new Map([
  ['db', 'software: the key encrypted in the database'],
  ['pkcs11', 'HSM (PKCS#11)'],
  ['vault', 'HashiCorp Vault'],
  ['aws-kms', 'AWS KMS'],
  ['azure-keyvault', 'Azure Key Vault'],
  ['gcp-kms', 'Google Cloud KMS'],
  ['csc', 'QTSP remote signing (CSC API)'],
]);

interface Certificate extends CertificateSummary {
  role: string;
  fingerprint: string;
}

/** The chain's certificates, leaf first, then the previous key's while it is still published. */
async function certificatesOf(chain: KeyChain): Promise<Certificate[]> {
  const parts = [
    { role: 'active', pem: [chain.activeCertificate, chain.rootCertificate].filter(Boolean).join('\n') },
    { role: 'previous', pem: chain.previousCertificate ?? '' },
  ];
  const described = await Promise.all(
    parts.map(async ({ role, pem }) => {
      const summaries = summarizeChain(pem);
      const fingerprints = await sha256Fingerprints(pem);
      return summaries.map((s, i) => ({ ...s, role: i === 0 ? `${role} leaf` : `${role} chain`, fingerprint: fingerprints[i] ?? '' }));
    }),
  );
  // The root certificate may also end the active PEM: each certificate is listed once.
  const seen = new Set<string>();
  return described.flat().filter((c) => !seen.has(c.fingerprint) && seen.add(c.fingerprint));
}

function ExpiryWarning({ leaf }: { leaf?: CertificateSummary }) {
  if (!leaf) return null;
  if (!expiresSoon(leaf.notAfter)) return null;
  const days = daysLeft(leaf.notAfter);
  return (
    <p class="warning" role="alert">
      {days < 0
        ? `The active certificate expired on ${leaf.notAfter.toLocaleDateString()}: rotate the key chain.`
        : `The active certificate expires in ${days} day${days === 1 ? '' : 's'} (${leaf.notAfter.toLocaleDateString()}): rotate the key chain.`}
    </p>
  );
}

export function KeyChainDetail({ id }: { id: string }) {
  const [chain, setChain] = useState<KeyChain>();
  const [certificates, setCertificates] = useState<Certificate[]>([]);
  const [rotations, setRotations] = useState<AuditEntry[]>();
  const [users, setUsers] = useState<string[]>();
  const [providerKind, setProviderKind] = useState<string>();
  const [problem, setProblem] = useState<Problem>();
  const [notice, setNotice] = useState<string>();
  const [deleted, setDeleted] = useState(false);
  const { confirm, dialog } = useConfirm();
  const path = { params: { path: { id } } };
  const mayIssue = holds(session(), ['issuance:manage']);

  const load = useCallback(async () => {
    // The chain, its provider's kind and its rotations (recorded in the audit log as key_chain.rotated, newest first), read at once.
    const [reply, providers, audit] = await Promise.all([
      result(api.GET('/api/key-chain/{id}', { params: { path: { id } } })),
      result(api.GET('/api/key-chain/providers')),
      result(api.GET('/api/admin/audit-logs', { params: { query: { limit: 500 } } })),
    ]);
    setProblem(reply.problem);
    setChain(reply.data);
    const type = providers.data?.find((p) => p.id === reply.data?.kmsProvider)?.type;
    setProviderKind(type && PROVIDER_KINDS.get(type));
    setRotations(audit.data?.filter((e) => e.actionType === 'key_chain.rotated' && e.before?.id === id));
    if (reply.data) setCertificates(await certificatesOf(reply.data));
  }, [id]);
  useEffect(() => {
    void load();
  }, [load]);
  useEffect(() => {
    if (!chain || !mayIssue) return;
    // A configuration without a key chain of its own is signed by the default attestation chain.
    const signsUnset = chain.default && chain.usageType === 'attestation';
    void result(api.GET('/api/issuer/credentials')).then(({ data }) =>
      setUsers((data ?? []).filter((c) => c.keyChainId === id || (c.keyChainId === null && signsUnset)).map((c) => c.id)),
    );
  }, [chain, id, mayIssue]);

  const act = async (question: string, label: string, run: () => Promise<{ problem?: Problem }>, done: string) => {
    if (!(await confirm(question, label))) return;
    const reply = await run();
    setProblem(reply.problem);
    setNotice(reply.problem ? undefined : done);
    if (!reply.problem) await load();
  };
  const rotate = () =>
    act(
      `Rotate ${id}? A new key signs from now on; the previous one stays published until its certificate expires.`,
      'Rotate',
      () => result(api.POST('/api/key-chain/{id}/rotate', path)),
      `${id} rotated`,
    );
  const makeDefault = () =>
    act(
      `Make ${id} the default ${chain?.usageType} key chain?`,
      'Make default',
      () => result(api.PATCH('/api/key-chain/{id}', { ...path, body: { default: true } })),
      `${id} is the default ${chain?.usageType} key chain`,
    );
  const remove = async () => {
    if (!(await confirm(`Delete the key chain ${id}? Its keys are destroyed.`, 'Delete'))) return;
    const reply = await result(api.DELETE('/api/key-chain/{id}', path));
    setProblem(reply.problem);
    if (!reply.problem) setDeleted(true);
  };

  if (deleted) return <DeletedNotice what="Key chain" id={id} list={{ route: 'key-chains', label: 'key chains' }} />;
  return (
    <>
      <h2>
        Key chain <code>{id}</code>
      </h2>
      <p>
        <a href="#/key-chains">All key chains</a>
      </p>
      <ProblemView problem={problem} />
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <ExpiryWarning leaf={certificates[0]} />
      {chain && (
        <dl class="facts">
          <dt>Provider</dt>
          <dd>
            {chain.kmsProvider}
            {providerKind && ` (${providerKind})`}
            {chain.externalKeyId && (
              <>
                {' '}
                (key <code>{chain.externalKeyId}</code>)
              </>
            )}
          </dd>
          <dt>Algorithm</dt>
          <dd>{chain.algorithm}</dd>
          <dt>Usage</dt>
          <dd>
            {chain.usageType} ({chain.usage}){chain.default ? ', the default' : ''}
          </dd>
          <dt>Kind</dt>
          <dd>{chain.type}</dd>
          <dt>Rotation</dt>
          <dd>
            {chain.rotationEnabled ? `every ${chain.rotationIntervalDays} days` : 'manual'}, last{' '}
            {formatDate(chain.lastRotatedAt) || 'never'}
          </dd>
          {chain.previousKeyExpiry && (
            <>
              <dt>Previous key published until</dt>
              <dd>{formatDate(chain.previousKeyExpiry)}</dd>
            </>
          )}
        </dl>
      )}
      <section class="card" aria-label="certificates">
        <h3>Certificates</h3>
        <Table
          label="certificate details"
          rows={certificates}
          empty="No certificate."
          columns={[
            { title: 'Certificate', cell: (c) => c.role },
            { title: 'Subject', cell: (c) => c.subject },
            { title: 'Issuer', cell: (c) => (c.selfSigned ? `${c.issuer} (self-signed)` : c.issuer) },
            { title: 'Not after', cell: (c) => c.notAfter.toLocaleDateString() },
            { title: 'SHA-256 fingerprint', cell: (c) => <code class="fingerprint">{c.fingerprint}</code> },
          ]}
        />
        {chain && <KeyChainDownloads chain={chain} />}
      </section>
      {rotations && (
        <section class="card" aria-label="rotations">
          <h3>Rotations</h3>
          <Table
            label="rotation history"
            rows={rotations}
            empty="Not rotated since it was made (or the audit log no longer holds it)."
            columns={[
              { title: 'When', cell: (e) => formatDate(e.timestamp) },
              { title: 'By', cell: (e) => e.actorDisplay ?? e.actorId },
            ]}
          />
        </section>
      )}
      {users && (
        <section class="card" aria-label="used by">
          <h3>Used by</h3>
          {users.length === 0 ? (
            <p class="muted">No credential configuration signs with it.</p>
          ) : (
            <ul>
              {users.map((configId) => (
                <li key={configId}>
                  <a href={`#/credential-configs/${encodeURIComponent(configId)}`}>{configId}</a>
                </li>
              ))}
            </ul>
          )}
        </section>
      )}
      {chain && (
        <div class="row">
          <button type="button" class="secondary" onClick={rotate}>
            Rotate
          </button>
          {!chain.default && (
            <>
              <button type="button" class="secondary" onClick={makeDefault}>
                Make default
              </button>
              <button type="button" class="danger" onClick={remove}>
                Delete {id}
              </button>
            </>
          )}
        </div>
      )}
      {dialog}
    </>
  );
}
