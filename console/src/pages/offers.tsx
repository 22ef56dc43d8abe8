// Issuance offers: a credential configuration, its claims, optionally a transaction code; the offer
// URI as a QR code for a wallet, and the session's status live.
import { useEffect, useState } from 'preact/hooks';
import { call, type Problem } from '../api.js';
import { JsonEditor, ProblemView, Qr } from '../components.js';
import { StatusBadge, useLiveStatus } from './live-session.js';

export function OffersPage() {
  const [configs, setConfigs] = useState<{ id: string }[]>([]);
  const [configId, setConfigId] = useState('');
  const [claims, setClaims] = useState('{\n  "given_name": "Erika",\n  "family_name": "Mustermann"\n}');
  const [txCode, setTxCode] = useState('');
  const [problem, setProblem] = useState<Problem>();
  const [offer, setOffer] = useState<{ uri: string; session: string; tx_code?: string }>();
  const status = useLiveStatus(offer?.session, 'active');

  useEffect(() => {
    void call('GET', '/api/issuer/credentials').then(({ data, problem }) => {
      setProblem(problem);
      const list = Array.isArray(data) ? data : [];
      setConfigs(list);
      setConfigId((current) => current || list[0]?.id || '');
    });
  }, []);

  const create = async (e: Event) => {
    e.preventDefault();
    let parsedClaims: unknown;
    try {
      parsedClaims = JSON.parse(claims);
    } catch {
      return;
    }
    const body = {
      response_type: 'uri',
      flow: 'pre_authorized_code',
      credentialConfigurationIds: [configId],
      credentialClaims: { [configId]: { type: 'inline', claims: parsedClaims } },
      ...(txCode && { tx_code: txCode }),
    };
    const { data, problem } = await call('POST', '/api/issuer/offer', body);
    setProblem(problem);
    setOffer(problem ? undefined : data);
  };

  return (
    <>
      <h2>Issue a credential</h2>
      <section class="card">
        <form onSubmit={create}>
          <label>
            Credential configuration
            <select value={configId} onChange={(e) => setConfigId((e.target as HTMLSelectElement).value)}>
              {configs.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.id}
                </option>
              ))}
            </select>
          </label>
          <JsonEditor label="Claims (JSON)" value={claims} onInput={setClaims} problem={problem} rows={8} />
          <label>
            Transaction code (optional: the wallet asks its user for it)
            <input value={txCode} inputMode="numeric" onInput={(e) => setTxCode((e.target as HTMLInputElement).value)} />
          </label>
          <ProblemView problem={problem} />
          <div class="row">
            <button type="submit" disabled={!configId}>
              Create offer
            </button>
          </div>
        </form>
      </section>
      {offer && (
        <section class="card" aria-label="offer">
          <h3>
            Offer <StatusBadge status={status} />
          </h3>
          <Qr text={offer.uri} label="QR code of the credential offer" />
          <p>
            <code data-testid="offer-uri">{offer.uri}</code>
          </p>
          {offer.tx_code && (
            <p>
              Transaction code: <strong data-testid="tx-code">{offer.tx_code}</strong>
            </p>
          )}
          <p class="muted">
            Session <a href={`#/sessions/${encodeURIComponent(offer.session)}`}>{offer.session}</a>
          </p>
        </section>
      )}
    </>
  );
}
