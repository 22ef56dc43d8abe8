// What the wallet-facing routes of every issuance concept share: the tenant parameter, the tag, the
// URL a DPoP proof must name, and no caching of protocol answers.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { attestationHeaders, type ClientRequest, type ResourceRequest } from './client-request.js';

export const TenantParams = z.object({ tenantId: z.string() });
export const WALLET_TAGS = ['wallet: OpenID4VCI'];
/** Protocol bodies are parsed by each endpoint's own schema, so that a bad one gets that protocol's error. */
export const ProtocolBody = z.record(z.string(), z.unknown()).optional();

/** The full URL the wallet called, as DPoP's htu compares it. */
export const requestUrl = (publicUrl: string, request: FastifyRequest) => `${publicUrl}${request.url}`;
export const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store');

/** A wallet's call of the authorization server (PAR, token endpoint). */
export function clientRequest(publicUrl: string, request: FastifyRequest): ClientRequest {
  const { dpop } = request.headers;
  return {
    tenantId: (request.params as { tenantId: string }).tenantId,
    body: (request.body as Record<string, unknown> | undefined) ?? {},
    url: requestUrl(publicUrl, request),
    attestation: attestationHeaders(request.headers),
    address: request.ip,
    ...(typeof dpop === 'string' && { dpop }),
  };
}

/** A wallet's call of a resource endpoint (credential, deferred credential, notification). */
export function resourceRequest(publicUrl: string, request: FastifyRequest): ResourceRequest {
  const { authorization, dpop } = request.headers;
  return {
    tenantId: (request.params as { tenantId: string }).tenantId,
    url: requestUrl(publicUrl, request),
    body: (request.body as Record<string, unknown> | undefined) ?? {},
    ...(authorization && { authorization }),
    ...(typeof dpop === 'string' && { dpop }),
  };
}
