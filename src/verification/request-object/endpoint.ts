// The request object of a presentation session: signed when the wallet fetches it by request_uri
// (once; the session moves to `fetched`), or at once for a request over the DC API. Over the DC API
// (OpenID4VP 1.0 appendix A.3.2) it carries `expected_origins` and response_mode dc_api.jwt, and
// neither response_uri nor state.
import type { JWK } from 'jose';
import type { SigningService } from '../../key-chains/signing.js';
import { OAuthError } from '../../platform/http/problem.js';
import type { SessionState } from '../../sessions/model.js';
import type { SessionService } from '../../sessions/service.js';
import { FederationRefused } from '../../trust/federation/entity-statement.js';
import { invalidRequest, unknownRequest } from '../errors.js';
import type { VerifierFederation } from '../federation.js';
import type { PresentationConfigurations } from '../ports.js';
import { flowOf, presentationPrivate, presentationPublic } from '../session.js';
import { PRESENTATION_HANDLE } from '../urls.js';
import { type RequestObjectInput, signRequestObject } from './sign.js';

export class RequestObjects {
  constructor(
    private readonly sessions: SessionService,
    private readonly configs: PresentationConfigurations,
    private readonly signing: SigningService,
    private readonly federation: VerifierFederation,
  ) {}

  /** What the wallet fetches at request_uri: checkSession, markFetched, sign. */
  async fetch(handle: string, walletNonce?: string): Promise<string> {
    // Read, moved and logged in one statement (on PostgreSQL).
    const log = { level: 'info', message: 'request object fetched' } as const;
    const { session, moved } = await this.sessions.moveByHandle(PRESENTATION_HANDLE, handle, { from: 'active', to: 'fetched', log });
    if (!session) throw unknownRequest();
    if (session.status === 'expired') throw invalidRequest('the presentation request has expired');
    if (!moved) throw invalidRequest('the request object was already fetched');
    return this.sign(session, walletNonce);
  }

  /**
   * The verifier's trust chain, built (or taken from the resolver's cache) when the wallet fetches, so
   * that it is current; a chain that no longer resolves is the verifier's failure, not the wallet's.
   */
  private async trustChain(tenantId: string): Promise<string[]> {
    try {
      return await this.federation.trustChain(tenantId);
    } catch (err) {
      if (!(err instanceof FederationRefused)) throw err;
      throw new OAuthError(503, 'server_error', `the verifier's trust chain does not resolve: ${err.message}`);
    }
  }

  /** The session's signed request object. */
  async sign(session: SessionState, walletNonce?: string): Promise<string> {
    const request = presentationPublic(session);
    const secrets = presentationPrivate(session);
    if (!secrets) throw invalidRequest('the presentation request is no longer available');
    const config = await this.configs.get(session.tenantId, request.requestId);
    const signer = await this.signing.signer(session.tenantId, { keyChainId: config.accessKeyChainId, usageType: 'access' });
    const { d: _private, ...encryptionJwk } = secrets.encryptionKey ?? {};
    const now = this.sessions.clock.now();
    const trustChain = request.clientIdPrefix === 'openid_federation' ? await this.trustChain(session.tenantId) : undefined;
    return signRequestObject(
      signer,
      {
        clientId: request.clientId,
        responseMode: request.responseMode as RequestObjectInput['responseMode'],
        ...(flowOf(request) === 'dc-api'
          ? { expectedOrigins: [request.browserOrigin as string] }
          : { responseUri: request.responseUri, state: secrets.state }),
        nonce: secrets.nonce,
        dcqlQuery: secrets.dcqlQuery,
        lifetimeSeconds: Math.max(1, Math.floor((Date.parse(session.expiresAt) - now.getTime()) / 1000)),
        ...(secrets.encryptionKey && { encryptionJwk: { ...encryptionJwk, kid: 'response-encryption' } as JWK }),
        ...(secrets.transactionData && { transactionData: secrets.transactionData }),
        ...(secrets.verifierInfo && { verifierInfo: secrets.verifierInfo }),
        ...(walletNonce && { walletNonce }),
        ...(trustChain && { trustChain }),
      },
      now,
    );
  }
}
