// A key chain's certificate chain (PEM) and its CA's revocation list (DER), as files. The chain sits
// behind the management API (it takes the bearer token), so it is fetched and handed to the browser
// as a file; the CRL is public (relying parties fetch it from the URL its certificates name), so it
// is a plain download link.
import { useState } from 'preact/hooks';
import { api, type ListItem, type Problem, result } from '../api.js';
import { ProblemView, saveAs } from '../components.js';

type KeyChain = ListItem<'/api/key-chain'>;

export function KeyChainDownloads({ chain }: { chain: KeyChain }) {
  const [problem, setProblem] = useState<Problem>();
  const downloadChain = async () => {
    const { data, problem } = await result(
      api.GET('/api/key-chain/{id}/certificate', { params: { path: { id: chain.id } }, parseAs: 'text' }),
    );
    setProblem(problem);
    if (typeof data === 'string') saveAs(data, `${chain.id}.pem`, 'application/pem-certificate-chain');
  };
  // Imported keys have no CA of the service's, and so no CRL.
  const crl =
    chain.type === 'imported' ? undefined : `/issuers/${encodeURIComponent(chain.tenantId)}/key-chains/${encodeURIComponent(chain.id)}/crl`;
  return (
    <div class="downloads">
      <button type="button" class="secondary" aria-label={`Download certificate chain of ${chain.id}`} onClick={downloadChain}>
        Certificates (PEM)
      </button>
      {crl && (
        <a href={crl} download={`${chain.id}.crl`} aria-label={`Download CRL of ${chain.id}`}>
          CRL
        </a>
      )}
      <ProblemView problem={problem} />
    </div>
  );
}
