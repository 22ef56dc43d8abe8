// Presentations that another protocol carries instead of the OpenID4VP response endpoint: the
// OpenID4VCI interactive authorization endpoint asks for one inside its own answer and receives the
// wallet's response in its own request. The request object is made from a presentation
// configuration as for any presentation request, and the vp_token is verified by the same steps as
// at the response endpoint: each presentation by its format's verifier (signature, issuer trust
// from the tenant's trust lists, key binding to the caller's audience and nonce, transaction data),
// its status, then the DCQL query. What the caller keeps between the two (nonce, query) is returned
// to it, since the carrying protocol owns the session.
import { createPrivateKey, type JsonWebKey, randomBytes } from 'node:crypto';
import { compactDecrypt, exportJWK, generateKeyPair, type JWK } from 'jose';
import { formatIdsWith, formatOf, type VerifiedPresentation } from '../../formats/index.js';
import type { SigningService } from '../../key-chains/signing.js';
import type { Clock } from '../../platform/clock.js';
import { nullRecord } from '../../platform/json.js';
import type { VerifiedForDcql } from '../dcql/check.js';
import { queryOf } from '../dcql/query.js';
import { PresentationRejected } from '../errors.js';
import { federationAnchorsOf, type PresentationConfigurations, type RegistrationCertificateSource, type TrustAnchors } from '../ports.js';
import {
  clientIdFor,
  type EmbeddedResponseMode,
  encodeTransactionData,
  signRequestObject,
  type VerifierInfo,
} from '../request-object/sign.js';
import { parseVpToken } from '../response/vp-token.js';
import type { StatusListChecker } from '../status/checker.js';
import type { AcceptedBy, TrustedAuthorities } from '../trusted-authorities/index.js';
import { verifyPresentation } from '../verify-presentation.js';

export type EmbeddedCredential = AcceptedBy<VerifiedPresentation & { queryId: string }>;

/** What the carrying protocol keeps from the request to verify the response against it. */
export interface EmbeddedPresentationState {
  presentationConfigId: string;
  /** The verifier's client_id in the request (x509_hash of the access certificate). */
  clientId: string;
  nonce: string;
  dcqlQuery: Record<string, unknown>;
  transactionData?: Record<string, unknown>[];
  responseMode: EmbeddedResponseMode;
  /** For an encrypted response mode: the step's ephemeral ECDH-ES private key (a JWK). */
  encryptionKey?: Record<string, unknown>;
}

export interface EmbeddedRequestInput {
  tenantId: string;
  presentationConfigId: string;
  /** A response mode of the carrying protocol, e.g. iae_post: the answer comes back to it, so no response_uri and no state. */
  responseMode: EmbeddedResponseMode;
  /** expected_origins of the request: the origin of the endpoint that carries it. */
  expectedOrigin: string;
  /** expected_url of the request, where the carrying protocol's draft has one: the endpoint that carries it. */
  expectedUrl?: string;
  lifetimeSeconds: number;
}

export class EmbeddedPresentations {
  constructor(
    private readonly publicUrl: string,
    private readonly configs: PresentationConfigurations,
    private readonly registrationCertificates: RegistrationCertificateSource,
    private readonly signing: SigningService,
    private readonly trust: TrustAnchors,
    private readonly status: StatusListChecker,
    private readonly clock: Clock,
    private readonly authorities: TrustedAuthorities,
  ) {}

  /** A signed OpenID4VP request object (JAR) made from a presentation configuration, and what to verify its answer against. */
  async request(input: EmbeddedRequestInput): Promise<{ request: string; state: EmbeddedPresentationState }> {
    const config = await this.configs.find(input.tenantId, input.presentationConfigId);
    if (!config) throw new Error(`no presentation configuration '${input.presentationConfigId}'`);
    checkFormats(config.dcql_query);
    const signer = await this.signing.signer(input.tenantId, { keyChainId: config.accessKeyChainId, usageType: 'access' });
    const registrationCert = await this.registrationCertificates.forRequest(input.tenantId, config);
    const verifierInfo: VerifierInfo[] = [
      ...(registrationCert ? [{ format: 'registration_cert', data: registrationCert }] : []),
      ...(config.attached ?? []),
    ];
    const encryption = input.responseMode.endsWith('.jwt')
      ? await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true })
      : undefined;
    const state: EmbeddedPresentationState = {
      presentationConfigId: config.id,
      clientId: clientIdFor('x509_hash', signer, this.publicUrl),
      nonce: randomBytes(32).toString('base64url'),
      dcqlQuery: config.dcql_query,
      ...(config.transaction_data?.length && { transactionData: config.transaction_data }),
      responseMode: input.responseMode,
      ...(encryption && { encryptionKey: { ...(await exportJWK(encryption.privateKey)) } }),
    };
    const request = await signRequestObject(
      signer,
      {
        clientId: state.clientId,
        responseMode: input.responseMode,
        nonce: state.nonce,
        dcqlQuery: state.dcqlQuery,
        expectedOrigins: [input.expectedOrigin],
        ...(input.expectedUrl && { expectedUrl: input.expectedUrl }),
        ...(encryption && { encryptionJwk: { ...(await exportJWK(encryption.publicKey)), kid: 'response-encryption' } }),
        lifetimeSeconds: input.lifetimeSeconds,
        ...(state.transactionData && { transactionData: state.transactionData }),
        ...(verifierInfo.length && { verifierInfo }),
      },
      this.clock.now(),
    );
    return { request, state };
  }

  /**
   * The wallet's authorization response (decrypted first, for an encrypted response mode) verified
   * against the request: every presentation of its vp_token (an audience of `audiences`, the request's
   * nonce), its status, then the DCQL query. Throws PresentationRejected with the reason.
   */
  async verify(
    tenantId: string,
    state: EmbeddedPresentationState,
    response: Record<string, unknown>,
    binding: { audiences: string[]; responseUri: string },
  ): Promise<EmbeddedCredential[]> {
    const payload = await responseOf(state, response);
    const vpToken = parseVpToken(payload.vp_token);
    const now = this.clock.now();
    const trust = await this.trust.tenantTrust(tenantId);
    const context = {
      clientId: state.clientId,
      audiences: binding.audiences,
      nonce: state.nonce,
      ...trust,
      transactionData: state.transactionData ? encodeTransactionData(state.transactionData) : [],
      now,
      responseUri: binding.responseUri,
      ...(state.encryptionKey && { encryptionJwk: publicPart(state.encryptionKey) }),
    };
    const verified: EmbeddedCredential[] = [];
    for (const [queryId, presentations] of Object.entries(vpToken)) {
      const query = queryOf(state, queryId);
      for (const presentation of presentations) {
        const forQuery = { ...context, federationAnchors: federationAnchorsOf(query) };
        for (const credential of await verifyPresentation(query.format, presentation, forQuery)) {
          const forStatus = formatOf(credential.format)?.statusListSubject?.(credential);
          await this.status.check(tenantId, credential.status, { ...trust, now, ...(forStatus && { credential: forStatus }) });
          verified.push(await this.authorities.accept(query, { queryId, ...credential }, now));
        }
      }
    }
    // Query ids are the tenant's names: grouped without a prototype, so that none finds an inherited member.
    const byQuery = nullRecord<VerifiedForDcql[]>();
    for (const credential of verified) byQuery[credential.queryId] = [...(byQuery[credential.queryId] ?? []), credential];
    const { checkDcql } = await import('../dcql/check.js');
    checkDcql(state.dcqlQuery, byQuery);
    return verified;
  }
}

/** The response as the request's mode asks: plain, or `response`, a JWE (ECDH-ES, A128GCM or A256GCM) to the step's key. */
async function responseOf(state: EmbeddedPresentationState, response: Record<string, unknown>): Promise<Record<string, unknown>> {
  if (!state.encryptionKey) {
    if (response.response !== undefined)
      throw new PresentationRejected(`this request expects response_mode ${state.responseMode}, not an encrypted response`);
    return response;
  }
  if (typeof response.response !== 'string')
    throw new PresentationRejected(`the response must be encrypted (response_mode ${state.responseMode})`);
  try {
    const { plaintext } = await compactDecrypt(
      response.response,
      createPrivateKey({ key: state.encryptionKey as JsonWebKey, format: 'jwk' }),
      { keyManagementAlgorithms: ['ECDH-ES'], contentEncryptionAlgorithms: ['A128GCM', 'A256GCM'] },
    );
    const payload: unknown = JSON.parse(new TextDecoder().decode(plaintext));
    if (!payload || typeof payload !== 'object' || Array.isArray(payload)) throw new Error('not an object');
    return payload as Record<string, unknown>;
  } catch {
    throw new PresentationRejected('the encrypted response could not be decrypted');
  }
}

const publicPart = ({ d: _private, ...jwk }: Record<string, unknown>) => jwk as JWK;

/** Only formats bound by audience and nonce are embedded: each format declares whether it is (embeddable). */
function checkFormats(dcqlQuery: Record<string, unknown>) {
  const queries = (dcqlQuery.credentials as { format?: unknown }[] | undefined) ?? [];
  const other = queries.find((q) => !formatOf(String(q.format))?.embeddable);
  if (other) {
    const embeddable = formatIdsWith((format) => format.embeddable).join(', ');
    throw new Error(
      `credential format ${String(other.format)} cannot be presented inside interactive authorization yet (${embeddable} only)`,
    );
  }
}
