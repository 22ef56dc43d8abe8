// The protocol faces of interactive authorization: one flow (the steps of the requested
// configurations, run by InteractiveProgress), spoken in the draft the wallet speaks.
//
// - authorization-challenge: OpenID4VCI 1.1 draft as of June 2026 (section 6, "Interactive
//   Authorization"), a profile of the Authorization Challenge Endpoint of OAuth 2.0 for First-Party
//   Applications (draft-ietf-oauth-first-party-apps-03, section 5). Types urn:openid:dcp:ia:...,
//   response modes ia_post / ia_post.jwt, an interaction asked for with 401 insufficient_authorization,
//   the code answered as authorization_code, and an SD-JWT key binding audience of `ia:` plus the
//   endpoint's derived origin (the draft's "Interactive Authorization Binding" of dc+sd-jwt).
// - iae: the Interactive Authorization Endpoint of the drafts before (January to June 2026), with the
//   bare type names wallets shipped first and the urn:openid:dcp:iae: names of March 2026; response
//   modes iae_post / iae_post.jwt, 200 answers with status, and a key binding audience of `iae:` plus
//   the endpoint's origin (the drafts since January 2026, as at the challenge endpoint) or plus its
//   full URL (the drafts before, which wallets still send).
//
// A flow stays with the face and the spellings it started with: its answers use the names the wallet
// listed, and its presentation must be bound to that face's audience, so a presentation made for the
// other face (another endpoint, another audience) is refused.
import { OAuthError } from '../../platform/http/problem.js';
import type { EmbeddedResponseMode } from '../../verification/request-object/sign.js';
import { invalidRequest } from '../errors.js';
import type { IssuerUrls } from '../urls.js';
import type { IaeAction } from './actions.js';

export type FaceName = 'authorization-challenge' | 'iae';
export type ActionType = IaeAction['type'];

/** What the flow answers, before a face puts it into its draft's shape. */
export type FlowAnswer =
  | { kind: 'authorized'; code: string }
  | { kind: 'presentation'; type: string; authSession: string; openid4vpRequest: { request: string } }
  | { kind: 'web'; type: string; authSession: string; requestUri: string; expiresIn: number };

export interface Face {
  name: FaceName;
  /** The endpoint of this face: where every request of a flow started here goes, and what its presentations are bound to. */
  endpoint(urls: IssuerUrls): string;
  /** The names of each interaction type this face accepts, the newest first. */
  interactionTypes: Record<ActionType, readonly string[]>;
  /** The OpenID4VP response mode that sends the answer back to this endpoint, encrypted or plain. */
  responseMode(encrypted: boolean): EmbeddedResponseMode;
  /** The key binding audiences a presentation made for this endpoint may carry (the drafts it serves differ). */
  audiences(endpoint: string): string[];
  /** Whether the OpenID4VP request names the endpoint in expected_url (drafts before expected_origins alone). */
  expectedUrl: boolean;
  /** An auth_session that is unknown, expired, spent or another face's. */
  unknownSession(): OAuthError;
  /** The HTTP answer: status and JSON body. */
  render(answer: FlowAnswer): { status: number; body: Record<string, unknown> };
}

const UNKNOWN_SESSION = 'auth_session is unknown, expired or already used';

export const AUTHORIZATION_CHALLENGE: Face = {
  name: 'authorization-challenge',
  endpoint: (urls) => urls.authorizationChallenge,
  interactionTypes: {
    'openid4vp-presentation': ['urn:openid:dcp:ia:openid4vp_presentation'],
    'redirect-to-web': ['urn:openid:dcp:ia:auth_via_web'],
  },
  responseMode: (encrypted) => (encrypted ? 'ia_post.jwt' : 'ia_post'),
  // The draft's dc+sd-jwt rule names the derived origin (RFC 6454 section 4); its example shows a
  // full URL, but the normative text and expected_origins both say origin, so that is what wallets bind.
  audiences: (endpoint) => [`ia:${new URL(endpoint).origin}`],
  expectedUrl: false,
  // First-party apps section 5.2.2.1: the error of an auth_session that is invalid, expired or revoked.
  unknownSession: () => new OAuthError(400, 'invalid_session', UNKNOWN_SESSION),
  render(answer) {
    if (answer.kind === 'authorized') return { status: 200, body: { authorization_code: answer.code } };
    const asked = { error: 'insufficient_authorization', interaction_type_required: answer.type, auth_session: answer.authSession };
    if (answer.kind === 'presentation') return { status: 401, body: { ...asked, openid4vp_request: answer.openid4vpRequest } };
    return { status: 401, body: { ...asked, request_uri: answer.requestUri, expires_in: answer.expiresIn } };
  },
};

export const INTERACTIVE_AUTHORIZATION_ENDPOINT: Face = {
  name: 'iae',
  endpoint: (urls) => urls.iae,
  interactionTypes: {
    'openid4vp-presentation': ['urn:openid:dcp:iae:openid4vp_presentation', 'openid4vp_presentation'],
    'redirect-to-web': ['urn:openid:dcp:iae:redirect_to_web', 'redirect_to_web'],
  },
  responseMode: (encrypted) => (encrypted ? 'iae_post.jwt' : 'iae_post'),
  // The origin is shared by every tenant of a deployment; the per-step nonce still ties a presentation to its flow.
  audiences: (endpoint) => [`iae:${new URL(endpoint).origin}`, `iae:${endpoint}`],
  expectedUrl: true,
  unknownSession: () => invalidRequest(UNKNOWN_SESSION),
  render(answer) {
    if (answer.kind === 'authorized') return { status: 200, body: { status: 'ok', code: answer.code } };
    const asked = { status: 'require_interaction', type: answer.type, auth_session: answer.authSession };
    if (answer.kind === 'presentation') return { status: 200, body: { ...asked, openid4vp_request: answer.openid4vpRequest } };
    return { status: 200, body: { ...asked, request_uri: answer.requestUri, expires_in: answer.expiresIn } };
  },
};

export const FACES: Record<FaceName, Face> = {
  'authorization-challenge': AUTHORIZATION_CHALLENGE,
  iae: INTERACTIVE_AUTHORIZATION_ENDPOINT,
};

/** The name the wallet listed for each type the actions need (the newest it listed); missing_interaction_type if one has none. */
export function spelledTypes(face: Face, actions: IaeAction[], listed: Set<string>): Partial<Record<ActionType, string>> {
  const spelled: Partial<Record<ActionType, string>> = {};
  const missing: string[] = [];
  for (const type of new Set(actions.map((a) => a.type))) {
    const names = face.interactionTypes[type];
    const name = names.find((n) => listed.has(n));
    if (name) spelled[type] = name;
    else missing.push(names.join(' or '));
  }
  if (missing.length)
    throw new OAuthError(
      400,
      'missing_interaction_type',
      `interaction_types_supported lacks ${missing.join(', ')}, which this authorization needs`,
    );
  return spelled;
}

/** The name a flow answers a type with: the one its wallet listed; flows stored before spellings were kept used the bare names. */
export function typeNameOf(face: Face, spelled: Partial<Record<ActionType, string>> | undefined, type: ActionType): string {
  const names = face.interactionTypes[type];
  return spelled?.[type] ?? (names[names.length - 1] as string);
}
