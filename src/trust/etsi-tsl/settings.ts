// The tenant's EU trusted lists (ETSI TS 119 612) as a trust source: the list of lists (LOTL) it
// follows, the certificates pinned for the LOTL's signature, and which service types count for what.
import { X509Certificate } from 'node:crypto';
import { z } from 'zod';
import { webUrl } from '../../platform/http/web-urls.js';

/** Service type identifiers counted by default, by purpose: qualified CAs and the EUDI providers of PIDs and attestations (issuers), and wallet providers. */
export const DEFAULT_PURPOSES = {
  credentials: [
    'http://uri.etsi.org/TrstSvc/Svctype/CA/QC',
    'http://uri.etsi.org/Svc/Svctype/Provider/PID',
    'http://uri.etsi.org/Svc/Svctype/Provider/EAA',
  ],
  walletAttestations: ['http://uri.etsi.org/Svc/Svctype/Provider/WalletProvider'],
};

const Certificate = z.string().refine(
  (pem) => {
    try {
      new X509Certificate(pem);
      return pem.includes('-----BEGIN CERTIFICATE-----');
    } catch {
      return false;
    }
  },
  { message: 'not a PEM X.509 certificate' },
);

export const EtsiTrustedListsSchema = z
  .strictObject({
    lotlUrl: webUrl().describe(
      'the list of trusted lists to follow, e.g. https://ec.europa.eu/tools/lotl/eu-lotl.xml; fetched through the outbound client',
    ),
    signerCertificates: z
      .array(Certificate)
      .min(1)
      .max(20)
      .describe(
        "the PEM certificates allowed to sign the LOTL (for the EU LOTL, those of the Official Journal's announcement); the national lists it points to are checked against the certificates the LOTL names for each",
      ),
    refreshHours: z
      .number()
      .min(1)
      .max(168)
      .default(24)
      .describe('how often the lists are fetched again; earlier when a list says its NextUpdate is sooner'),
    purposes: z
      .strictObject({
        credentials: z
          .array(z.string().min(1).max(300))
          .max(50)
          .describe('service types whose certificates anchor credential issuers and status list signers'),
        walletAttestations: z
          .array(z.string().min(1).max(300))
          .max(50)
          .describe('service types whose certificates anchor wallet providers'),
      })
      .default(DEFAULT_PURPOSES)
      .describe(
        'which ServiceTypeIdentifier URIs count for what; only services whose current status is granted or recognisedatnationallevel',
      ),
  })
  .describe(
    'EU trusted lists (ETSI TS 119 612): the LOTL named here is fetched, its XML signature verified against signerCertificates, the national lists it points to (XML ones) fetched and verified against the certificates it names for each, and the certificates of their granted services trusted for the purposes below; null: none',
  )
  .meta({ id: 'EtsiTrustedLists' });

export type EtsiTrustedListsSettings = z.output<typeof EtsiTrustedListsSchema>;
export type EtsiPurpose = keyof EtsiTrustedListsSettings['purposes'];
