// Status lists for mso_mdoc: the MSO carries `status` {status_list: {idx, uri}} pointing into a list
// of the tenant, and revoking the session flips that entry in the public status list token.
import 'reflect-metadata';
import { X509Certificate } from 'node:crypto';
import { inflateSync } from 'node:zlib';
import { Holder, type VerificationAssessment } from '@owf/mdoc';
import { getListFromStatusListJWT } from '@sd-jwt/jwt-status-list';
import { Decoder, Tag } from 'cbor-x';
import { decodeProtectedHeader, importX509, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mdocContext } from '../../src/platform/crypto/mdoc-context.js';
import { startService, type TestService } from '../support/service.js';
import { holderKey, receiveCredentials } from '../support/wallet.js';

const DOC_TYPE = 'org.iso.18013.5.1.mDL';
const NS = 'org.iso.18013.5.1';

let svc: TestService;
beforeAll(async () => {
  svc = await startService();
});
afterAll(() => svc.stop());

const decoder = new Decoder({ mapsAsObjects: false });
/** The bytes inside #6.24: cbor-x hands them over as @owf/mdoc's DataItem or as a Tag. */
const embedded = (value: unknown): Uint8Array =>
  value instanceof Tag ? (value.value as Uint8Array) : ((value as { buffer: Uint8Array }).buffer as Uint8Array);

/** The MSO's `status` entry, read from the raw CBOR. */
function msoStatus(credential: string) {
  const top = decoder.decode(Buffer.from(credential, 'base64url')) as Map<string, unknown>;
  const [, , payload] = top.get('issuerAuth') as Uint8Array[];
  const mso = decoder.decode(embedded(decoder.decode(payload as Uint8Array))) as Map<string, unknown>;
  const status = mso.get('status') as Map<string, Map<string, unknown>> | undefined;
  const list = status?.get('status_list');
  return status && { keys: [...status.keys()], idx: list?.get('idx') as number, uri: list?.get('uri') as string };
}

/** The entry's value in the public status list token, verified against its x5c leaf and read twice. */
async function readStatus(uri: string, idx: number) {
  const reply = await fetch(uri, { headers: { accept: 'application/statuslist+jwt' } });
  expect(reply.status).toBe(200);
  const jwt = await reply.text();
  const header = decodeProtectedHeader(jwt);
  const leaf = new X509Certificate(Buffer.from((header.x5c as string[])[0] as string, 'base64'));
  const { payload } = await jwtVerify(jwt, await importX509(leaf.toString(), header.alg as string), { typ: 'statuslist+jwt' });
  expect(payload.sub).toBe(uri);
  const list = payload.status_list as { bits: number; lst: string };
  const bytes = inflateSync(Buffer.from(list.lst, 'base64url'));
  const bit = idx * list.bits;
  const byHand = ((bytes[bit >> 3] as number) >> (bit & 7)) & ((1 << list.bits) - 1);
  expect(getListFromStatusListJWT(jwt).getStatus(idx)).toBe(byHand);
  return byHand;
}

async function setUp(tenant: string, statusManagement: boolean) {
  const { token } = await svc.tenant(tenant);
  expect((await svc.call('PUT', '/api/status-list-config', { token, body: { immediateUpdate: true } })).status).toBe(200);
  const created = await svc.call('POST', '/api/issuer/credentials', {
    token,
    body: {
      id: 'mdl',
      config: { format: 'mso_mdoc', docType: DOC_TYPE },
      statusManagement,
      fields: [
        { path: ['family_name'], type: 'string', namespace: NS },
        { path: ['birth_date'], type: 'date', namespace: NS },
      ],
    },
  });
  expect(created.status, created.text).toBe(201);
  return token;
}

async function issue(token: string, keys = 1) {
  const offer = await svc.call('POST', '/api/issuer/offer', {
    token,
    body: {
      response_type: 'uri',
      flow: 'pre_authorized_code',
      credentialConfigurationIds: ['mdl'],
      credentialClaims: { mdl: { type: 'inline', claims: { [NS]: { family_name: 'Mustermann', birth_date: '1964-08-12' } } } },
    },
  });
  expect(offer.status, offer.text).toBe(201);
  const { response } = await receiveCredentials(offer.body.uri, {
    keys: await Promise.all(Array.from({ length: keys }, () => holderKey())),
  });
  const credentials = (response.credentialResponse.credentials as { credential: string }[]).map((c) => c.credential);
  return { sessionId: offer.body.session as string, credentials };
}

describe('status of mso_mdoc credentials', () => {
  it('gives the MSO an entry of a tenant list; revoking the session flips it in the public token', async () => {
    const token = await setUp('mdoc-status', true);
    const { sessionId, credentials } = await issue(token);
    const [credential] = credentials as [string];
    const status = msoStatus(credential);
    expect(status?.keys).toEqual(['status_list']);
    const { idx, uri } = status as { idx: number; uri: string };
    expect(Number.isInteger(idx) && idx >= 0).toBe(true);
    expect(uri).toMatch(new RegExp(`^${svc.url}/issuers/mdoc-status/status-lists/[0-9a-f-]+$`));

    // the list is the tenant's, with this one entry in use
    const lists = (await svc.call('GET', '/api/status-lists', { token })).body as { uri: string; usedEntries: number; capacity: number }[];
    expect(lists).toHaveLength(1);
    expect(lists[0]).toMatchObject({ uri, usedEntries: 1 });
    expect(idx).toBeLessThan(lists[0]?.capacity as number);

    // the mdoc still verifies against the tenant root
    const root = (await svc.call('GET', '/api/key-chain/default-attestation', { token })).body.rootCertificate as string;
    const checks: VerificationAssessment[] = [];
    await Holder.verifyIssuerSigned(
      {
        issuerSigned: credential,
        trustedCertificates: [new Uint8Array(new X509Certificate(root).raw)],
        verificationCallback: (c) => checks.push(c),
      },
      mdocContext,
    );
    expect(checks.filter((c) => c.status === 'FAILED')).toEqual([]);

    expect(await readStatus(uri, idx)).toBe(0);
    const revoked = await svc.call('POST', '/api/session/revoke', { token, body: { sessionId, status: 1 } });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body.updatedEntries).toBe(1);
    expect(await readStatus(uri, idx)).toBe(1);
    const reinstated = await svc.call('POST', '/api/session/revoke', { token, body: { sessionId, status: 0 } });
    expect(reinstated.status, reinstated.text).toBe(200);
    expect(await readStatus(uri, idx)).toBe(0);
  });

  it('gives each mdoc of a batch its own entry, and none without statusManagement', async () => {
    const token = await setUp('mdoc-batch', true);
    const { sessionId, credentials } = await issue(token, 2);
    expect(credentials).toHaveLength(2);
    const entries = credentials.map((c) => msoStatus(c) as { idx: number; uri: string });
    expect(entries[0]?.uri).toBe(entries[1]?.uri);
    expect(entries[0]?.idx).not.toBe(entries[1]?.idx);
    const revoked = await svc.call('POST', '/api/session/revoke', { token, body: { sessionId, status: 1 } });
    expect(revoked.body.updatedEntries).toBe(2);
    for (const { uri, idx } of entries) expect(await readStatus(uri, idx)).toBe(1);

    const plain = await setUp('mdoc-plain', false);
    const { credentials: unreferenced } = await issue(plain);
    expect(msoStatus(unreferenced[0] as string)).toBeUndefined();
    expect((await svc.call('GET', '/api/status-lists', { token: plain })).body).toEqual([]);
  });
});
