// EU trusted lists (ETSI TS 119 612) made for a test: a LOTL and national lists shaped like the real
// ones (SchemeInformation with its operator, type and territory, pointers with their signer
// certificates and MIME type, providers with services and their history), signed by xml-crypto's
// SignedXml as the Commission and the member states sign theirs: enveloped, exclusive c14n, RSA-SHA256.

import { webcrypto } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { SignedXml } from 'xml-crypto';
import type { TestCertificate } from './test-pki.js';

export const GRANTED = 'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/granted';
export const WITHDRAWN = 'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/withdrawn';
export const CA_QC = 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC';
export const PID_PROVIDER = 'http://uri.etsi.org/Svc/Svctype/Provider/PID';
export const WALLET_PROVIDER = 'http://uri.etsi.org/Svc/Svctype/Provider/WalletProvider';
const TSL_XML = 'application/vnd.etsi.tsl+xml';

export interface TestService {
  name: string;
  type: string;
  certificates: string[];
  /** Current status first, then past ones (ServiceHistory). */
  statuses: { status: string; since: Date }[];
}

export interface TestPointer {
  location: string;
  territory: string;
  signers: string[];
  mimeType?: string;
}

export interface TestList {
  territory: string;
  sequenceNumber?: number;
  issued?: Date;
  nextUpdate: Date;
  pointers?: TestPointer[];
  services?: TestService[];
}

const wrap = (der: string) => der.match(/.{1,64}/g)?.join('\n') ?? der;
const digitalIds = (certificates: string[]) =>
  certificates.map((der) => `<tsl:DigitalId><tsl:X509Certificate>${wrap(der)}</tsl:X509Certificate></tsl:DigitalId>`).join('');

function pointerXml(pointer: TestPointer): string {
  return `
    <tsl:OtherTSLPointer>
      <tsl:ServiceDigitalIdentities><tsl:ServiceDigitalIdentity>${digitalIds(pointer.signers)}</tsl:ServiceDigitalIdentity></tsl:ServiceDigitalIdentities>
      <tsl:TSLLocation>${pointer.location}</tsl:TSLLocation>
      <tsl:AdditionalInformation>
        <tsl:OtherInformation><tsl:TSLType>http://uri.etsi.org/TrstSvc/TrustedList/TSLType/EUgeneric</tsl:TSLType></tsl:OtherInformation>
        <tsl:OtherInformation><tsl:SchemeOperatorName><tsl:Name xml:lang="en">Supervisory body of ${pointer.territory}</tsl:Name></tsl:SchemeOperatorName></tsl:OtherInformation>
        <tsl:OtherInformation><tsl:SchemeTypeCommunityRules><tsl:URI xml:lang="en">http://uri.etsi.org/TrstSvc/TrustedList/schemerules/EUcommon</tsl:URI></tsl:SchemeTypeCommunityRules></tsl:OtherInformation>
        <tsl:OtherInformation><tsl:SchemeTerritory>${pointer.territory}</tsl:SchemeTerritory></tsl:OtherInformation>
        <tsl:OtherInformation><ns3:MimeType xmlns:ns3="http://uri.etsi.org/02231/v2/additionaltypes#">${pointer.mimeType ?? TSL_XML}</ns3:MimeType></tsl:OtherInformation>
      </tsl:AdditionalInformation>
    </tsl:OtherTSLPointer>`;
}

function serviceXml(service: TestService): string {
  const [current, ...history] = service.statuses;
  if (!current) throw new Error('a service needs a status');
  return `
      <tsl:TSPService>
        <tsl:ServiceInformation>
          <tsl:ServiceTypeIdentifier>${service.type}</tsl:ServiceTypeIdentifier>
          <tsl:ServiceName><tsl:Name xml:lang="en">${service.name}</tsl:Name></tsl:ServiceName>
          <tsl:ServiceDigitalIdentity>${digitalIds(service.certificates)}</tsl:ServiceDigitalIdentity>
          <tsl:ServiceStatus>${current.status}</tsl:ServiceStatus>
          <tsl:StatusStartingTime>${current.since.toISOString()}</tsl:StatusStartingTime>
        </tsl:ServiceInformation>${
          history.length
            ? `
        <tsl:ServiceHistory>${history
          .map(
            (past) => `
          <tsl:ServiceHistoryInstance>
            <tsl:ServiceTypeIdentifier>${service.type}</tsl:ServiceTypeIdentifier>
            <tsl:ServiceName><tsl:Name xml:lang="en">${service.name}</tsl:Name></tsl:ServiceName>
            <tsl:ServiceDigitalIdentity>${digitalIds(service.certificates)}</tsl:ServiceDigitalIdentity>
            <tsl:ServiceStatus>${past.status}</tsl:ServiceStatus>
            <tsl:StatusStartingTime>${past.since.toISOString()}</tsl:StatusStartingTime>
          </tsl:ServiceHistoryInstance>`,
          )
          .join('')}
        </tsl:ServiceHistory>`
            : ''
        }
      </tsl:TSPService>`;
}

/** The unsigned XML of a trusted list (the LOTL when it has pointers and territory EU). */
export function trustedListXml(list: TestList): string {
  const lotl = list.territory === 'EU';
  const services = list.services ?? [];
  return `<?xml version="1.0" encoding="UTF-8"?>
<tsl:TrustServiceStatusList xmlns:tsl="http://uri.etsi.org/02231/v2#" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" Id="TSL-${list.territory}" TSLTag="http://uri.etsi.org/19612/TSLTag">
  <tsl:SchemeInformation>
    <tsl:TSLVersionIdentifier>5</tsl:TSLVersionIdentifier>
    <tsl:TSLSequenceNumber>${list.sequenceNumber ?? 1}</tsl:TSLSequenceNumber>
    <tsl:TSLType>http://uri.etsi.org/TrstSvc/TrustedList/TSLType/${lotl ? 'EUlistofthelists' : 'EUgeneric'}</tsl:TSLType>
    <tsl:SchemeOperatorName><tsl:Name xml:lang="en">${lotl ? 'European Commission' : `Supervisory body of ${list.territory}`}</tsl:Name></tsl:SchemeOperatorName>
    <tsl:SchemeName><tsl:Name xml:lang="en">${list.territory}:Trusted list</tsl:Name></tsl:SchemeName>
    <tsl:StatusDeterminationApproach>http://uri.etsi.org/TrstSvc/TrustedList/StatusDetn/${lotl ? 'EUlistofthelists' : 'EUappropriate'}</tsl:StatusDeterminationApproach>
    <tsl:SchemeTypeCommunityRules><tsl:URI xml:lang="en">http://uri.etsi.org/TrstSvc/TrustedList/schemerules/EUcommon</tsl:URI></tsl:SchemeTypeCommunityRules>
    <tsl:SchemeTerritory>${list.territory}</tsl:SchemeTerritory>
    <tsl:HistoricalInformationPeriod>65535</tsl:HistoricalInformationPeriod>${
      list.pointers?.length ? `\n    <tsl:PointersToOtherTSL>${list.pointers.map(pointerXml).join('')}\n    </tsl:PointersToOtherTSL>` : ''
    }
    <tsl:ListIssueDateTime>${(list.issued ?? new Date(Date.now() - 86_400_000)).toISOString()}</tsl:ListIssueDateTime>
    <tsl:NextUpdate><tsl:dateTime>${list.nextUpdate.toISOString()}</tsl:dateTime></tsl:NextUpdate>
  </tsl:SchemeInformation>${
    services.length
      ? `
  <tsl:TrustServiceProviderList>
    <tsl:TrustServiceProvider>
      <tsl:TSPInformation><tsl:TSPName><tsl:Name xml:lang="en">Provider of ${list.territory}</tsl:Name></tsl:TSPName></tsl:TSPInformation>
      <tsl:TSPServices>${services.map(serviceXml).join('')}
      </tsl:TSPServices>
    </tsl:TrustServiceProvider>
  </tsl:TrustServiceProviderList>`
      : ''
  }
</tsl:TrustServiceStatusList>`;
}

/** The PEM PKCS#8 private key of a test certificate (RS256 or ES256). */
export async function privateKeyPem(certificate: TestCertificate): Promise<string> {
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', certificate.keys.privateKey));
  return `-----BEGIN PRIVATE KEY-----\n${wrap(pkcs8.toString('base64'))}\n-----END PRIVATE KEY-----\n`;
}

/** `xml` with an enveloped XML signature over the whole document (URI ""), by `signer` (an RS256 test certificate). */
export async function signList(xml: string, signer: TestCertificate, uri = ''): Promise<string> {
  const signature = new SignedXml({
    privateKey: await privateKeyPem(signer),
    publicCert: signer.pem,
    signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  });
  signature.addReference({
    xpath: '/*',
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
    uri,
    isEmptyUri: uri === '',
  });
  signature.computeSignature(xml, { prefix: 'ds', location: { reference: '/*', action: 'append' } });
  return signature.getSignedXml();
}

/** A small HTTP server answering lists by path; `served` is changed by the test, `down` answers 503. */
export async function listServer() {
  const served = new Map<string, string>();
  const state = { down: false, requests: 0 };
  const server: Server = createServer((req, res) => {
    state.requests += 1;
    const body = served.get(req.url ?? '');
    if (state.down || body === undefined) return res.writeHead(state.down ? 503 : 404).end();
    res.writeHead(200, { 'content-type': TSL_XML }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { served, state, url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
