// Access certificates: the registrar certifies the public key of one of the tenant's access key
// chains, and the certificate replaces the chain's own, so that request objects are signed under it
// (x5c) and x509_hash client ids follow. The certificate is stored the way a PATCH of the key chain
// stores a replacement for the same key, with the same checks.
import { createPublicKey, type JsonWebKey } from 'node:crypto';
import type { KeyChain } from '../key-chains/model.js';
import { publicPart } from '../key-chains/providers/key-provider.js';
import type { KeyChainService } from '../key-chains/service.js';
import type { RequestContext } from '../platform/auth/principal.js';
import { conflict, invalidFields, Problem } from '../platform/http/problem.js';
import { relyingPartyId } from './relying-party.js';
import type { RegistrarService } from './service.js';

export interface AccessCertificateRequest {
  /** An access key chain of the tenant; absent: the tenant's default access key chain. */
  keyChainId?: string;
}

export class AccessCertificates {
  constructor(
    private readonly registrar: RegistrarService,
    private readonly keyChains: KeyChainService,
    /** The service's public host name, the certificate's DNS subject alternative name. */
    private readonly publicHost: string,
  ) {}

  async request(ctx: RequestContext, tenantId: string, input: AccessCertificateRequest): Promise<KeyChain> {
    const chain = await this.accessChain(tenantId, input.keyChainId);
    if (!(await this.registrar.configured(tenantId))) throw conflict('the tenant has no registrar configured (POST /api/registrar/config)');
    const rpId = await relyingPartyId(this.registrar, tenantId);
    const issued = await this.registrar.call(tenantId, 'POST', '/access-certificates', {
      body: { publicKey: spkiPem(chain), dns: [this.publicHost], rpId },
    });
    const crt = (issued as { crt?: unknown } | null)?.crt;
    if (typeof crt !== 'string' || crt.length === 0 || crt.length > 65_536)
      throw new Problem(502, 'Bad Gateway', 'the registrar answered without a certificate (crt)');
    return this.store(ctx, tenantId, chain.id, crt);
  }

  /** The chain named, which must be an access chain of the tenant, else the tenant's default one. */
  private async accessChain(tenantId: string, keyChainId: string | undefined): Promise<KeyChain> {
    if (keyChainId === undefined) return this.keyChains.toKeyChain(await this.keyChains.resolve(tenantId, { usageType: 'access' }));
    const chain = await this.keyChains.find(tenantId, keyChainId);
    if (!chain) throw invalidFields([{ field: 'body.keyChainId', message: `key chain '${keyChainId}' does not exist` }]);
    if (chain.usageType !== 'access')
      throw invalidFields([
        {
          field: 'body.keyChainId',
          message: `key chain '${keyChainId}' has usage type ${chain.usageType}; access certificates are for access key chains`,
        },
      ]);
    return chain;
  }

  /**
   * Through the key chain's own update, which checks that the certificate certifies the chain's
   * active key. A certificate that fails there is the registrar's fault (or the key rotated
   * meanwhile): a 502 that says why, not a 400 about a field the caller never sent.
   */
  private async store(ctx: RequestContext, tenantId: string, keyChainId: string, crt: string): Promise<KeyChain> {
    try {
      return await this.keyChains.update(ctx, tenantId, keyChainId, { certificate: crt });
    } catch (err) {
      if (!(err instanceof Problem) || err.status !== 400) throw err;
      const reason = (err.extra.errors as { message: string }[] | undefined)?.[0]?.message ?? err.detail;
      throw new Problem(502, 'Bad Gateway', `the registrar's certificate was not stored: ${reason}`);
    }
  }
}

function spkiPem(chain: KeyChain): string {
  return createPublicKey({ key: publicPart(chain.activeJwk) as JsonWebKey, format: 'jwk' })
    .export({ type: 'spki', format: 'pem' })
    .toString();
}
