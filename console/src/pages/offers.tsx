// Issuance offers: a credential configuration, its claims, optionally a transaction code; the offer
// URI as a QR code for a wallet, and the session's status live.
import { useState } from 'preact/hooks';
import { api, asBody, type Problem, result } from '../api.js';
import { JsonEditor, ProblemView, parsedJson, Qr, useConfigurationChoice } from '../components.js';
import { StatusBadge, useLiveStatus } from './live-session.js';

const listConfigurations = () => result(api.GET('/api/issuer/credentials'));

export function OffersPage() {
  const { chosen: configId, select, loadProblem } = useConfigurationChoice(listConfigurations, 'Credential configuration');
  const [claims, setClaims] = useState('{\n  "given_name": "Erika",\n  "family_name": "Mustermann"\n}');
  const [txCode, setTxCode] = useState('');
  const [problem, setProblem] = useState<Problem>();
  const [offer, setOffer] = useState<{ uri: string; session: string; tx_code?: string }>();
  const status = useLiveStatus(offer?.session, 'active');

  const create = async (e: Event) => {
    e.preventDefault();
    const parsed = parsedJson(claims);
    if (!parsed) return;
    const body = asBody('/api/issuer/offer', 'post', {
      response_type: 'uri',
      flow: 'pre_authorized_code',
      credentialConfigurationIds: [configId],
      credentialClaims: { [configId]: { type: 'inline', claims: parsed.value } },
      ...(txCode && { tx_code: txCode }),
    });
    const { data, problem } = await result(api.POST('/api/issuer/offer', { body }));
    setProblem(problem);
    // The answer does not repeat the transaction code: the one typed here is shown beside the QR code.
    setOffer(data ? { uri: data.uri, session: data.session, tx_code: txCode || undefined } : undefined);
  };

  return (
    <>
      <h2>Issue a credential</h2>
      <section class="card">
        <form onSubmit={create}>
          {select}
          <JsonEditor label="Claims (JSON)" value={claims} onInput={setClaims} problem={problem} rows={8} />
          <label>
            Transaction code (optional: the wallet asks its user for it)
            <input value={txCode} inputMode="numeric" onInput={(e) => setTxCode((e.target as HTMLInputElement).value)} />
          </label>
          <ProblemView problem={problem ?? loadProblem} />
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
