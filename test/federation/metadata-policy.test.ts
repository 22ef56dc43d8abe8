// Metadata policy operators (OpenID Federation 1.0 section 6.1): each one applied to leaf metadata,
// combined across a trust anchor's and an intermediate's policies, and the combinations that refuse.
import { describe, expect, it } from 'vitest';
import { applyPolicy, combinePolicies } from '../../src/federation/policy.js';

const LEAF = {
  openid_credential_issuer: {
    credential_issuer: 'https://issuer.example',
    display: [{ name: 'Issuer' }],
    scopes: ['pid', 'mdl', 'diploma'],
    algs: ['ES256', 'ES384'],
  },
};
const resolve = (...policies: Record<string, unknown>[]) =>
  applyPolicy(LEAF, combinePolicies(policies.map((p) => ({ policy: { openid_credential_issuer: p }, crit: [] })))).openid_credential_issuer;

describe('each operator applied', () => {
  it('value sets a parameter, null removes it', () => {
    expect(resolve({ credential_issuer: { value: 'https://other.example' } })?.credential_issuer).toBe('https://other.example');
    expect(resolve({ display: { value: null } })).not.toHaveProperty('display');
  });

  it('add adds values to a list (and makes it when absent)', () => {
    expect(resolve({ algs: { add: ['ES512'] } })?.algs).toEqual(['ES256', 'ES384', 'ES512']);
    expect(resolve({ grants: { add: ['pre-authorized_code'] } })?.grants).toEqual(['pre-authorized_code']);
  });

  it('default sets only an absent parameter', () => {
    expect(resolve({ credential_issuer: { default: 'https://x.example' }, batch: { default: 5 } })).toMatchObject({
      credential_issuer: 'https://issuer.example',
      batch: 5,
    });
  });

  it('one_of refuses a value not listed', () => {
    expect(resolve({ credential_issuer: { one_of: ['https://issuer.example', 'https://x.example'] } })?.credential_issuer).toBe(
      'https://issuer.example',
    );
    expect(() => resolve({ credential_issuer: { one_of: ['https://x.example'] } })).toThrow(/metadata policy: .*not one of/);
  });

  it('subset_of keeps only the values listed; superset_of requires values', () => {
    expect(resolve({ scopes: { subset_of: ['pid', 'diploma', 'other'] } })?.scopes).toEqual(['pid', 'diploma']);
    expect(resolve({ algs: { superset_of: ['ES256'] } })?.algs).toEqual(['ES256', 'ES384']);
    expect(() => resolve({ algs: { superset_of: ['ES512'] } })).toThrow(/superset_of/);
  });

  it('essential refuses an absent parameter, also one subset_of emptied', () => {
    expect(() => resolve({ logo: { essential: true } })).toThrow(/openid_credential_issuer.logo is essential and absent/);
    expect(() => resolve({ scopes: { subset_of: ['other'], essential: true } })).toThrow(/essential/);
    expect(resolve({ logo: { essential: false } })).not.toHaveProperty('logo');
  });

  it('applies in the fixed order: add before default, then the checks', () => {
    expect(resolve({ grants: { add: ['pre-authorized_code'], default: ['authorization_code'] } })?.grants).toEqual(['pre-authorized_code']);
    expect(resolve({ grants: { add: ['pre-authorized_code'], superset_of: ['pre-authorized_code'] } })?.grants).toEqual([
      'pre-authorized_code',
    ]);
  });

  it('refuses a value that contradicts the other operators of the same policy', () => {
    expect(() => resolve({ algs: { value: ['ES256'], add: ['ES384'] } })).toThrow(/add is not a subset of value/);
    expect(() => resolve({ algs: { value: ['ES256'], superset_of: ['ES384'] } })).toThrow(/value is not a superset of superset_of/);
  });
});

describe('policies of several superiors combined', () => {
  it('one_of and subset_of intersect, add and superset_of unite, essential holds if either says so', () => {
    const anchor = {
      scopes: { subset_of: ['pid', 'mdl'] },
      credential_issuer: { one_of: ['https://issuer.example', 'https://x.example'] },
    };
    const intermediate = {
      scopes: { subset_of: ['pid', 'diploma'] },
      credential_issuer: { one_of: ['https://issuer.example'] },
      algs: { add: ['ES512'] },
    };
    expect(resolve(anchor, intermediate)).toMatchObject({
      scopes: ['pid'],
      credential_issuer: 'https://issuer.example',
      algs: ['ES256', 'ES384', 'ES512'],
    });
    expect(() => resolve({ logo: { essential: true } }, { logo: { essential: false } })).toThrow(/essential/);
  });

  it('refuses superiors that conflict', () => {
    expect(() =>
      resolve({ credential_issuer: { value: 'https://a.example' } }, { credential_issuer: { value: 'https://b.example' } }),
    ).toThrow(/different values/);
    expect(() => resolve({ credential_issuer: { one_of: ['a'] } }, { credential_issuer: { one_of: ['b'] } })).toThrow(/no value in common/);
    expect(() => resolve({ credential_issuer: { value: 'c', one_of: ['a', 'b'] } })).toThrow(/value is not one of one_of/);
  });

  it('refuses an unknown operator only when it is critical', () => {
    const policy = { openid_credential_issuer: { credential_issuer: { regexp: '^https' } } };
    expect(() => combinePolicies([{ policy, crit: ['regexp'] }])).toThrow(/critical operator regexp/);
    expect(combinePolicies([{ policy, crit: [] }])).toEqual({ openid_credential_issuer: { credential_issuer: {} } });
  });
});
