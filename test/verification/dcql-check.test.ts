// checkDcql over verified credentials made here: a query is satisfied only by credentials of its
// format, type (vct or doctype), claims and values, as many as it allows, and a presentation that
// does not fit the query's shape is the wallet's fault (a rejection), not a server error.
import { DcqlPresentationResult } from 'dcql';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkDcql, type VerifiedForDcql } from '../../src/verification/dcql/check.js';
import { queryOf } from '../../src/verification/dcql/query.js';
import { PresentationRejected } from '../../src/verification/errors.js';

const VCT = 'urn:eudi:pid:1';
const DOC_TYPE = 'org.iso.18013.5.1.mDL';
const NS = 'org.iso.18013.5.1';
const UNSATISFIED = 'DCQL: the presented credentials and claims do not satisfy the query';

const PID_QUERY = {
  credentials: [
    {
      id: 'pid',
      format: 'dc+sd-jwt',
      meta: { vct_values: [VCT] },
      claims: [{ path: ['given_name'] }, { path: ['age_over_18'], values: [true] }],
    },
  ],
};
const MDL_QUERY = {
  credentials: [
    {
      id: 'mdl',
      format: 'mso_mdoc',
      meta: { doctype_value: DOC_TYPE },
      claims: [{ path: [NS, 'family_name'] }, { path: [NS, 'age_over_18'], values: [true] }],
    },
  ],
};
const pid = (claims: Record<string, unknown> = { given_name: 'Erika', age_over_18: true }, vct = VCT): VerifiedForDcql => ({
  format: 'dc+sd-jwt',
  vct,
  claims,
});
const mdl = (
  elements: Record<string, unknown> = { family_name: 'Mustermann', age_over_18: true },
  docType = DOC_TYPE,
): VerifiedForDcql => ({
  format: 'mso_mdoc',
  docType,
  claims: { [NS]: elements },
});

function outcome(query: Record<string, unknown>, presented: Record<string, VerifiedForDcql[]>): string {
  try {
    checkDcql(query, presented);
    return 'satisfied';
  } catch (err) {
    return err instanceof PresentationRejected ? err.message : `not a rejection: ${String(err)}`;
  }
}

describe('checkDcql', () => {
  it('is satisfied by an SD-JWT VC of the vct with the claims and values asked for', () => {
    expect(outcome(PID_QUERY, { pid: [pid()] })).toBe('satisfied');
    expect(outcome(PID_QUERY, { pid: [pid({ given_name: 'Erika', age_over_18: true, family_name: 'Mustermann' })] })).toBe('satisfied');
  });

  it('is not satisfied by another vct, a missing claim, another value, or another format', () => {
    expect(outcome(PID_QUERY, { pid: [pid(undefined, 'urn:other:1')] })).toBe(UNSATISFIED);
    expect(outcome(PID_QUERY, { pid: [pid({ age_over_18: true })] })).toBe(UNSATISFIED);
    expect(outcome(PID_QUERY, { pid: [pid({ given_name: 'Erika', age_over_18: false })] })).toBe(UNSATISFIED);
    expect(outcome(PID_QUERY, { pid: [mdl({ given_name: 'Erika', age_over_18: true })] })).toBe(UNSATISFIED);
    expect(outcome(PID_QUERY, {})).toBe(UNSATISFIED);
  });

  it('is satisfied by an mdoc of the doctype with the elements asked for in their namespace, and only then', () => {
    expect(outcome(MDL_QUERY, { mdl: [mdl()] })).toBe('satisfied');
    expect(outcome(MDL_QUERY, { mdl: [mdl(undefined, 'org.example.other')] })).toBe(UNSATISFIED);
    expect(outcome(MDL_QUERY, { mdl: [mdl({ family_name: 'Mustermann' })] })).toBe(UNSATISFIED);
    expect(outcome(MDL_QUERY, { mdl: [{ ...mdl(), claims: { 'org.example.ns': { family_name: 'M', age_over_18: true } } }] })).toBe(
      UNSATISFIED,
    );
    expect(outcome(MDL_QUERY, { mdl: [pid({ [NS]: { family_name: 'M', age_over_18: true } })] })).toBe(UNSATISFIED);
  });

  it('refuses several credentials for a query that does not allow multiple, as a rejection', () => {
    const refusal = outcome(PID_QUERY, { pid: [pid(), pid()] });
    expect(refusal).toMatch(/^DCQL: /);
    expect(refusal).not.toBe(UNSATISFIED);
    const multiple = { credentials: [{ ...PID_QUERY.credentials[0], multiple: true }] };
    expect(outcome(multiple, { pid: [pid(), pid()] })).toBe('satisfied');
  });

  it('is satisfied by one option of a credential set', () => {
    const query = { credentials: [...PID_QUERY.credentials, ...MDL_QUERY.credentials], credential_sets: [{ options: [['pid'], ['mdl']] }] };
    expect(outcome(query, { mdl: [mdl()] })).toBe('satisfied');
    expect(outcome(query, { pid: [pid()] })).toBe('satisfied');
    expect(outcome(query, { pid: [pid({ age_over_18: true })] })).toBe(UNSATISFIED);
  });

  it('passes on a query that is not DCQL as an error of the configuration, not the wallet', () => {
    expect(outcome({ credentials: [] }, {})).toMatch(/^not a rejection: /);
  });

  it('matches the authority a credential was trusted through against the trusted_authorities of the query', () => {
    const query = {
      credentials: [
        { ...PID_QUERY.credentials[0], trusted_authorities: [{ type: 'openid_federation', values: ['https://anchor.example'] }] },
      ],
    };
    const authority = { type: 'openid_federation' as const, values: ['https://anchor.example'] as [string] };
    expect(outcome(query, { pid: [{ ...pid(), authority }] })).toBe('satisfied');
    expect(outcome(query, { pid: [{ ...pid(), authority: { ...authority, values: ['https://other.example'] } }] })).toBe(UNSATISFIED);
  });

  it('matches the authority an mdoc was trusted through, and an mdoc without one does not satisfy trusted_authorities', () => {
    const query = {
      credentials: [{ ...MDL_QUERY.credentials[0], trusted_authorities: [{ type: 'aki', values: ['s9tIpPmhxdiuNkHMEWNpYim8S8Y'] }] }],
    };
    const authority = { type: 'aki' as const, values: ['s9tIpPmhxdiuNkHMEWNpYim8S8Y'] as [string] };
    expect(outcome(query, { mdl: [{ ...mdl(), authority }] })).toBe('satisfied');
    expect(outcome(query, { mdl: [{ ...mdl(), authority: { ...authority, values: ['another-key-id'] } }] })).toBe(UNSATISFIED);
    expect(outcome(query, { mdl: [mdl()] })).toBe(UNSATISFIED);
    expect(outcome(MDL_QUERY, { mdl: [{ ...mdl(), authority }] })).toBe('satisfied');
  });
});

describe('checkDcql when the DCQL library itself fails', () => {
  afterEach(() => vi.restoreAllMocks());

  it('passes the failure on as a server error, not as the wallet’s fault', () => {
    vi.spyOn(DcqlPresentationResult, 'fromDcqlPresentation').mockImplementation(() => {
      throw new TypeError('a defect in the library');
    });
    expect(outcome(PID_QUERY, { pid: [pid()] })).toBe('not a rejection: TypeError: a defect in the library');
  });
});

describe('queryOf', () => {
  it('finds the credential query a vp_token entry answers by its id, and rejects an entry for no query', () => {
    const request = { dcqlQuery: { credentials: [...PID_QUERY.credentials, ...MDL_QUERY.credentials] } };
    expect(queryOf(request, 'mdl')).toBe(MDL_QUERY.credentials[0]);
    expect(queryOf(request, 'pid')).toBe(PID_QUERY.credentials[0]);
    expect(() => queryOf(request, 'other')).toThrow(new PresentationRejected("vp_token: 'other' is not a credential query of the request"));
    expect(() => queryOf({ dcqlQuery: {} }, 'pid')).toThrow(PresentationRejected);
  });
});
