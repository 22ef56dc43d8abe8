// Answers a presentation request (OpenID4VP 1.0, DCQL): fetches and verifies the signed request,
// shows who asks (client_id and the certificate that signed the request), finds credentials in the
// wallet that satisfy the DCQL query, shows exactly the claims that would be disclosed, asks for
// consent, then sends SD-JWT VC presentations (with a KB-JWT) and mdoc DeviceResponses to the
// verifier's response endpoint, encrypted when the request asks for direct_post.jwt.
import { randomBytes, X509Certificate } from 'node:crypto';
import type { Jwk } from '@openid4vc/oauth2';
import { extractEncryptionJwkFromJwks, Openid4vpClient } from '@openid4vc/openid4vp';
import { DeviceRequest, DocRequest, Holder, IssuerSigned, ItemsRequest, SessionTranscript } from '@owf/mdoc';
import { DcqlQuery, type DcqlQueryResult } from 'dcql';
import { base64url, calculateJwkThumbprint, importJWK, type JWK, SignJWT } from 'jose';
import { coseSigningKey, holderMdocContext, oneLine, presentationCallbacks } from './callbacks.js';
import { type CredentialView, dcqlCredential, sdJwtVc, sha256, viewOf } from './credentials.js';
import { tracingFetch } from './http.js';
import { abbreviate, type Io, indent, json } from './io.js';
import type { HolderKey, StoredCredential, WalletStore } from './store.js';

export interface PresentOptions {
  store: WalletStore;
  io: Io;
  /** Send without asking (scripts, the README walkthrough). */
  yes?: boolean;
  /** The stored credential to present (`--credential`), for the query it satisfies, instead of the wallet's choice. */
  credentialId?: string;
}

export interface PresentResult {
  sent: boolean;
  status?: number;
  redirectUri?: string;
}

type ClaimPath = (string | number | null)[];

interface TrustedAuthority {
  type: string;
  values: string[];
}

interface Query {
  credentials: { id: string; claims?: { path: ClaimPath }[]; trusted_authorities?: TrustedAuthority[] }[];
  credential_sets?: { options: string[][]; required?: boolean }[];
}

/** The parts of a verified request object this wallet reads. */
interface RequestPayload {
  client_id: string;
  nonce: string;
  response_uri: string;
  response_mode?: string;
  dcql_query?: Query;
  transaction_data?: string[];
  client_metadata?: { client_name?: string; jwks?: { keys: Jwk[] } };
}

interface Choice {
  queryId: string;
  stored: StoredCredential;
  view: CredentialView;
  paths: ClaimPath[];
  /** The claims that will be disclosed, as the query selected them. */
  disclosed: unknown;
  /** How many other stored credentials satisfy the query too. */
  alternatives: number;
}

function client(io: Io) {
  return new Openid4vpClient({ callbacks: { ...presentationCallbacks(), fetch: tracingFetch(io) } });
}

/** Fetches the request object and checks its signature and client_id against its x5c certificate. */
async function resolve(uri: string, io: Io) {
  const vp = client(io);
  const parsed = vp.parseOpenid4vpAuthorizationRequest({ authorizationRequest: uri });
  const resolved = await vp.resolveOpenId4vpAuthorizationRequest({
    authorizationRequestPayload: parsed.params as never,
    wallet: { nonce: randomBytes(16).toString('base64url') } as never,
  });
  const signer = resolved.jar?.signer;
  if (signer?.method !== 'x5c')
    throw new Error('the request is not signed with an X.509 certificate; this wallet answers signed requests only');
  const certificate = new X509Certificate(Buffer.from(signer.x5c[0] as string, 'base64'));
  return { payload: resolved.authorizationRequestPayload as unknown as RequestPayload, certificate };
}

/** The credential queries to answer: every query, or with credential_sets the first satisfiable option of each set. */
function queriesToAnswer(query: Query, matched: (id: string) => boolean): string[] {
  if (!query.credential_sets) return query.credentials.map((c) => c.id);
  const ids = new Set<string>();
  for (const set of query.credential_sets) {
    const option = set.options.find((candidate) => candidate.every(matched));
    if (option) for (const id of option) ids.add(id);
    else if (set.required !== false) throw new Error(`no credential in this wallet satisfies the credential set ${json(set.options)}`);
  }
  return [...ids];
}

type Held = { stored: StoredCredential; view: CredentialView };

/**
 * Federation trust is decided by resolving the issuer's trust chain up to an anchor, which this
 * wallet does not do: a query that asks for it is refused plainly rather than answered with a
 * credential the verifier would refuse.
 */
function refuseFederationTrust(query: Query) {
  for (const credentialQuery of query.credentials) {
    const anchors = (credentialQuery.trusted_authorities ?? []).filter((a) => a.type === 'openid_federation').flatMap((a) => a.values);
    if (anchors.length)
      throw new Error(
        `the credential query '${credentialQuery.id}' accepts only issuers trusted through OpenID Federation (${anchors.join(', ')}); this demo wallet cannot resolve federation trust chains`,
      );
  }
}

/** The stored credentials the wallet can read; one it cannot (a damaged file) is named and left out. */
async function readable(store: WalletStore, io: Io): Promise<Held[]> {
  const held: Held[] = [];
  for (const stored of store.list()) {
    try {
      held.push({ stored, view: await viewOf(stored) });
    } catch (err) {
      io.print(`  (leaving out ${stored.id}: ${(err as Error).message})`);
    }
  }
  return held;
}

const originOf = (url: string) => {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
};

/**
 * The order in which credentials that satisfy a query are offered: the one the user named, then
 * those from the verifier's own deployment (same origin as its response_uri: an issuer it likely
 * trusts), then the newest. A wallet keeps credentials of deployments long gone (a service started
 * over with a fresh database): the oldest match is the one most likely refused.
 */
function preference(payload: RequestPayload, credentialId: string | undefined) {
  const verifier = originOf(payload.response_uri);
  const issuedAt = ({ stored, view }: Held) => view.issuedAt ?? stored.receivedAt;
  const key = (held: Held) => [held.stored.id === credentialId ? 0 : 1, originOf(held.stored.issuer) === verifier ? 0 : 1] as const;
  return (a: Held, b: Held) => {
    const [ka, kb] = [key(a), key(b)];
    // Issued in the same second (iat): the later received is the newer.
    return (
      ka[0] - kb[0] || ka[1] - kb[1] || issuedAt(b).localeCompare(issuedAt(a)) || b.stored.receivedAt.localeCompare(a.stored.receivedAt)
    );
  };
}

/** For each credential query to answer, the preferred credential that satisfies it and the claims of its first satisfied claim set. */
async function choose(query: Query, payload: RequestPayload, { store, io, credentialId }: PresentOptions): Promise<Choice[]> {
  // Parsed first: what the verifier sent is read below only in the shape the dcql library accepts.
  const parsed = DcqlQuery.parse(query as never);
  refuseFederationTrust(query);
  const held = await readable(store, io);
  if (credentialId && !held.some(({ stored }) => stored.id === credentialId))
    throw new Error(`no stored credential '${credentialId}' (npm run wallet -- list shows them)`);
  const result: DcqlQueryResult = DcqlQuery.query(
    parsed,
    held.map(({ view }) => dcqlCredential(view)),
  );
  const match = (id: string) => result.credential_matches[id];
  const better = preference(payload, credentialId);
  const choices = queriesToAnswer(query, (id) => match(id)?.success === true).map((queryId) => {
    const found = match(queryId);
    const candidates = found?.success ? [...found.valid_credentials] : [];
    const credentialQuery = query.credentials.find((c) => c.id === queryId);
    if (!candidates.length) {
      const trusted = credentialQuery?.trusted_authorities ? ' from the trusted authorities it names' : '';
      throw new Error(`no credential in this wallet satisfies the credential query '${queryId}'${trusted}`);
    }
    const heldAt = (index: number) => held[index] as Held;
    candidates.sort((a, b) => better(heldAt(a.input_credential_index), heldAt(b.input_credential_index)));
    const valid = candidates[0] as (typeof candidates)[number];
    const claimSet = valid.claims.success ? valid.claims.valid_claim_sets[0] : undefined;
    const claims = credentialQuery?.claims ?? [];
    const paths = (claimSet?.valid_claim_indexes ?? []).map((i) => (claims[i] as { path: ClaimPath }).path);
    const { stored, view } = heldAt(valid.input_credential_index);
    return { queryId, stored, view, paths, disclosed: claimSet?.output ?? {}, alternatives: candidates.length - 1 };
  });
  if (credentialId && !choices.some(({ stored }) => stored.id === credentialId))
    throw new Error(`the stored credential '${credentialId}' does not satisfy what the request asks for`);
  return choices;
}

/** The @sd-jwt presentation frame that discloses exactly `paths` (null selects every array element). */
function presentationFrame(paths: ClaimPath[], claims: unknown): Record<string, unknown> {
  const frame: Record<string, unknown> = {};
  const add = (into: Record<string, unknown>, path: ClaimPath, value: unknown) => {
    const [head, ...rest] = path;
    const keys = head === null ? (Array.isArray(value) ? value.map((_, i) => i) : []) : [head as string | number];
    for (const key of keys) {
      if (into[key] === true) continue;
      if (rest.length === 0) {
        into[key] = true;
        continue;
      }
      into[key] ??= {};
      add(into[key] as Record<string, unknown>, rest, (value as Record<string | number, unknown> | undefined)?.[key]);
    }
  };
  for (const path of paths) add(frame, path, claims);
  return frame;
}

const decodeTransactionData = (entry: string) => JSON.parse(Buffer.from(entry, 'base64url').toString()) as { credential_ids?: string[] };

/** Base64url transaction data entries that name `queryId`, hashed as the KB-JWT carries them. */
const transactionDataHashes = (payload: RequestPayload, queryId: string) =>
  (payload.transaction_data ?? [])
    .filter((entry) => decodeTransactionData(entry).credential_ids?.includes(queryId))
    .map((entry) => sha256(entry).toString('base64url'));

async function presentSdJwt(choice: Choice, holder: HolderKey, payload: RequestPayload, io: Io): Promise<string> {
  let presentation = await sdJwtVc().present(choice.stored.credential, presentationFrame(choice.paths, choice.view.claims) as never);
  if (!presentation.endsWith('~')) presentation += '~';
  const hashes = transactionDataHashes(payload, choice.queryId);
  const kbPayload = {
    iat: Math.floor(Date.now() / 1000),
    aud: payload.client_id,
    nonce: payload.nonce,
    sd_hash: sha256(presentation).toString('base64url'),
    ...(hashes.length && { transaction_data_hashes: hashes, transaction_data_hashes_alg: 'sha-256' }),
  };
  io.print(`  ${choice.queryId}: SD-JWT VC with ${presentation.split('~').length - 2} disclosure(s) and a KB-JWT`);
  io.print(indent(json(kbPayload), 4));
  const kbJwt = await new SignJWT(kbPayload)
    .setProtectedHeader({ alg: 'ES256', typ: 'kb+jwt' })
    .sign(await importJWK(holder.privateJwk, 'ES256'));
  return `${presentation}${kbJwt}`;
}

async function presentMdoc(
  choice: Choice,
  holder: HolderKey,
  payload: RequestPayload,
  encryptionJwk: JWK | undefined,
  io: Io,
): Promise<string> {
  if (transactionDataHashes(payload, choice.queryId).length)
    throw new Error(`transaction data for the mdoc query '${choice.queryId}' is not supported`);
  const namespaces: Record<string, Record<string, boolean>> = {};
  for (const [namespace, element] of choice.paths) {
    namespaces[String(namespace)] = { ...namespaces[String(namespace)], [String(element)]: false };
  }
  const deviceRequest = DeviceRequest.create({
    docRequests: [DocRequest.create({ itemsRequest: ItemsRequest.create({ docType: choice.view.type, namespaces }) })],
  });
  // OpenID4VP 1.0 B.2.6.1: the handover binds client_id, nonce, the response encryption key and response_uri.
  const jwkThumbprint = encryptionJwk && base64url.decode(await calculateJwkThumbprint(encryptionJwk, 'sha256'));
  const sessionTranscript = await SessionTranscript.forOid4Vp(
    { clientId: payload.client_id, nonce: payload.nonce, responseUri: payload.response_uri, ...(jwkThumbprint && { jwkThumbprint }) },
    holderMdocContext,
  );
  const deviceResponse = await Holder.createDeviceResponseForDeviceRequest(
    {
      deviceRequest,
      sessionTranscript,
      issuerSigned: [IssuerSigned.fromEncodedForOid4Vci(choice.stored.credential)],
      signature: { signingKey: coseSigningKey(holder.privateJwk) },
    },
    holderMdocContext,
  );
  io.print(`  ${choice.queryId}: mdoc DeviceResponse for ${choice.view.type}, device-signed over the OpenID4VP session transcript`);
  return deviceResponse.encodedForOid4Vp;
}

const ENCRYPTION = {
  authorization_encryption_alg_values_supported: ['ECDH-ES'],
  authorization_encryption_enc_values_supported: ['A128GCM', 'A256GCM'],
};

async function send(payload: RequestPayload, vpToken: Record<string, string[]>, encryptionJwk: JWK | undefined, io: Io) {
  const vp = client(io);
  const response = await vp.createOpenid4vpAuthorizationResponse({
    authorizationRequestPayload: payload as never,
    authorizationResponsePayload: { vp_token: vpToken as never } as never,
    ...(encryptionJwk && {
      jarm: { encryption: { nonce: payload.nonce, jwk: encryptionJwk as never }, serverMetadata: ENCRYPTION as never },
    }),
  });
  if (encryptionJwk) io.print(`Encrypting the response to the verifier's key (${encryptionJwk.kid ?? encryptionJwk.crv}) and sending it:`);
  else io.print('Sending the response:');
  const submitted = await vp.submitOpenid4vpAuthorizationResponse({
    authorizationRequestPayload: payload as never,
    authorizationResponsePayload: response.authorizationResponsePayload,
    ...(response.jarm && { jarm: { responseJwt: response.jarm.responseJwt } }),
  });
  const text = await submitted.response.text();
  const body = text ? (JSON.parse(text) as { redirect_uri?: string }) : {};
  return { status: submitted.response.status, body };
}

export async function answerRequest(uri: string, options: PresentOptions): Promise<PresentResult> {
  const { store, io, yes } = options;
  io.print('Fetching the presentation request');
  const { payload, certificate } = await resolve(uri, io);
  io.print(`Verifier: ${payload.client_id}`);
  io.print(
    `  request signed by ${oneLine(certificate.subject)} (issued by ${oneLine(certificate.issuer)}, valid until ${certificate.validTo})`,
  );
  if (payload.client_metadata?.client_name) io.print(`  name: ${payload.client_metadata.client_name}`);
  const query = payload.dcql_query;
  if (!query) throw new Error('the request carries no DCQL query');

  const choices = await choose(query, payload, options);
  io.print('It asks for:');
  for (const choice of choices) {
    io.print(`  ${choice.queryId}: ${choice.view.type} (${choice.stored.id}, issued by ${choice.view.issuer}), disclosing`);
    if (choice.alternatives)
      io.print(`    (${choice.alternatives} other stored credential(s) satisfy it too; --credential <id> presents another)`);
    io.print(indent(json(choice.disclosed), 4));
  }
  // What the user approves along with the disclosure (a payment, a signature): shown before consent.
  for (const entry of payload.transaction_data ?? []) io.print(`  and confirms the transaction ${json(decodeTransactionData(entry))}`);
  if (!yes && !/^y(es)?$/i.test(await io.ask('Send these claims to the verifier? [y/N] '))) {
    io.print('Nothing was sent.');
    return { sent: false };
  }

  const holder = await store.holderKey();
  const encrypted = payload.response_mode === 'direct_post.jwt';
  const jwks = payload.client_metadata?.jwks;
  const encryptionJwk =
    encrypted && jwks ? (extractEncryptionJwkFromJwks(jwks, { supportedAlgValues: ['ECDH-ES'] }) as JWK | undefined) : undefined;
  if (encrypted && !encryptionJwk) throw new Error('the request asks for an encrypted response but names no ECDH-ES key');
  io.print('Presentations:');
  const vpToken: Record<string, string[]> = {};
  for (const choice of choices) {
    const presentation =
      choice.view.format === 'dc+sd-jwt'
        ? await presentSdJwt(choice, holder, payload, io)
        : await presentMdoc(choice, holder, payload, encryptionJwk, io);
    vpToken[choice.queryId] = [presentation];
    io.print(`    vp_token.${choice.queryId}: ${abbreviate(presentation)}`);
  }
  const { status, body } = await send(payload, vpToken, encryptionJwk, io);
  if (status >= 300) throw new Error(`the verifier refused the presentation: ${status} ${json(body)}`);
  io.print(`The verifier accepted the presentation${body.redirect_uri ? `; continue at ${body.redirect_uri}` : '.'}`);
  return { sent: true, status, ...(body.redirect_uri && { redirectUri: body.redirect_uri }) };
}
