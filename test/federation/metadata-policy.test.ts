// Metadata policy operators (OpenID Federation 1.0 section 6.1): each one applied to leaf metadata,
// combined across a trust anchor's and an intermediate's policies, and the combinations that refuse.
import { describe, expect, it } from 'vitest';
import { applyPolicy, combinePolicies } from '../../src/trust/federation/policy.js';

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

// Each operator's merge rule (OpenID Federation 1.0 section 6.1.3.1) across two and three superiors:
// the combined policy exactly, and what it leaves of the leaf's metadata.
const combined = (...policies: Record<string, unknown>[]) =>
  combinePolicies(policies.map((p) => ({ policy: { openid_credential_issuer: p }, crit: [] }))).openid_credential_issuer;

describe('each operator merged across superiors', () => {
  it('value: equal values merge, a different one at any level refuses', () => {
    const same = { credential_issuer: { value: 'https://other.example' } };
    expect(combined(same, same, same)).toEqual(same);
    expect(resolve(same, same, same)?.credential_issuer).toBe('https://other.example');
    expect(() => resolve(same, same, { credential_issuer: { value: 'https://third.example' } })).toThrow(
      'metadata policy: openid_credential_issuer.credential_issuer: the superiors set different values',
    );
    // Lists are compared whole: the same members in another order are another value.
    expect(() => resolve({ algs: { value: ['ES256', 'ES384'] } }, { algs: { value: ['ES384', 'ES256'] } })).toThrow(/different values/);
  });

  it('default: equal defaults merge, different ones refuse', () => {
    const same = { batch: { default: 5 } };
    expect(combined(same, same)).toEqual(same);
    expect(resolve(same, same)?.batch).toBe(5);
    expect(() => resolve(same, { batch: { default: 6 } })).toThrow(
      'metadata policy: openid_credential_issuer.batch: the superiors set different defaults',
    );
  });

  it('essential: true at any level stays true, false only when every level says false', () => {
    expect(combined({ logo: { essential: true } }, { logo: { essential: false } })).toEqual({ logo: { essential: true } });
    expect(combined({ logo: { essential: false } }, { logo: { essential: true } })).toEqual({ logo: { essential: true } });
    expect(combined({ logo: { essential: false } }, { logo: { essential: false } }, { logo: { essential: false } })).toEqual({
      logo: { essential: false },
    });
    expect(() => resolve({ logo: { essential: false } }, { logo: { essential: false } }, { logo: { essential: true } })).toThrow(
      'metadata policy: openid_credential_issuer.logo is essential and absent',
    );
  });

  it('add: the union of every level, each value once', () => {
    expect(combined({ algs: { add: ['ES512'] } }, { algs: { add: ['EdDSA', 'ES512'] } }, { algs: { add: ['PS256'] } })).toEqual({
      algs: { add: ['ES512', 'EdDSA', 'PS256'] },
    });
    expect(resolve({ algs: { add: ['ES512'] } }, { algs: { add: ['EdDSA', 'ES256'] } })?.algs).toEqual([
      'ES256',
      'ES384',
      'ES512',
      'EdDSA',
    ]);
  });

  it('superset_of: the union of every level, so the leaf must hold what each requires', () => {
    expect(
      combined({ algs: { superset_of: ['ES256'] } }, { algs: { superset_of: ['ES384'] } }, { algs: { superset_of: ['ES256'] } }),
    ).toEqual({
      algs: { superset_of: ['ES256', 'ES384'] },
    });
    expect(resolve({ algs: { superset_of: ['ES256'] } }, { algs: { superset_of: ['ES384'] } })?.algs).toEqual(['ES256', 'ES384']);
    expect(() => resolve({ algs: { superset_of: ['ES256'] } }, { algs: { superset_of: ['ES512'] } })).toThrow(
      'metadata policy: openid_credential_issuer.algs lacks values the policy requires (superset_of)',
    );
  });

  it('one_of: the intersection of every level; an empty one refuses', () => {
    const issuers = ['https://issuer.example', 'https://x.example', 'https://y.example'];
    expect(
      combined(
        { credential_issuer: { one_of: issuers } },
        { credential_issuer: { one_of: ['https://y.example', 'https://issuer.example'] } },
        { credential_issuer: { one_of: ['https://issuer.example', 'https://y.example', 'https://z.example'] } },
      ),
    ).toEqual({ credential_issuer: { one_of: ['https://issuer.example', 'https://y.example'] } });
    expect(() =>
      resolve(
        { credential_issuer: { one_of: issuers } },
        { credential_issuer: { one_of: ['https://x.example'] } },
        { credential_issuer: { one_of: ['https://y.example'] } },
      ),
    ).toThrow("metadata policy: openid_credential_issuer.credential_issuer: the superiors' one_of have no value in common");
  });

  it('subset_of: the intersection of every level, which may be empty and then empties the parameter', () => {
    expect(
      combined(
        { scopes: { subset_of: ['pid', 'mdl', 'diploma'] } },
        { scopes: { subset_of: ['diploma', 'pid', 'x'] } },
        { scopes: { subset_of: ['pid', 'diploma'] } },
      ),
    ).toEqual({ scopes: { subset_of: ['pid', 'diploma'] } });
    expect(resolve({ scopes: { subset_of: ['pid', 'mdl'] } }, { scopes: { subset_of: ['mdl', 'diploma'] } })?.scopes).toEqual(['mdl']);
    expect(combined({ scopes: { subset_of: ['pid'] } }, { scopes: { subset_of: ['mdl'] } })).toEqual({ scopes: { subset_of: [] } });
    expect(resolve({ scopes: { subset_of: ['pid'] } }, { scopes: { subset_of: ['mdl'] } })?.scopes).toEqual([]);
  });

  it('a parameter or an entity type only a lower level names is taken as it is', () => {
    expect(combined({ scopes: { subset_of: ['pid'] } }, { algs: { add: ['ES512'] } })).toEqual({
      scopes: { subset_of: ['pid'] },
      algs: { add: ['ES512'] },
    });
    const policy = combinePolicies([
      { policy: { openid_credential_issuer: { scopes: { subset_of: ['pid'] } } }, crit: [] },
      { policy: undefined, crit: [] },
      { policy: { federation_entity: { organization_name: { value: 'Org' } } }, crit: [] },
    ]);
    expect(policy).toEqual({
      openid_credential_issuer: { scopes: { subset_of: ['pid'] } },
      federation_entity: { organization_name: { value: 'Org' } },
    });
  });
});

describe('operators that contradict each other refuse, in one policy and across superiors', () => {
  it('value outside subset_of', () => {
    expect(() => resolve({ algs: { value: ['ES256', 'ES512'], subset_of: ['ES256', 'ES384'] } })).toThrow(
      'metadata policy: openid_credential_issuer.algs: value is not a subset of subset_of',
    );
    expect(() => resolve({ algs: { subset_of: ['ES256'] } }, { algs: { value: 'ES512' } })).toThrow(/value is not a subset of subset_of/);
    expect(resolve({ algs: { subset_of: ['ES256', 'ES384'] } }, { algs: { value: ['ES384'] } })?.algs).toEqual(['ES384']);
  });

  it('value outside one_of', () => {
    expect(() =>
      resolve(
        { credential_issuer: { one_of: ['https://a.example', 'https://b.example'] } },
        { credential_issuer: { value: 'https://c.example' } },
      ),
    ).toThrow('metadata policy: openid_credential_issuer.credential_issuer: value is not one of one_of');
    expect(
      resolve(
        { credential_issuer: { one_of: ['https://a.example', 'https://b.example'] } },
        { credential_issuer: { value: 'https://b.example' } },
      )?.credential_issuer,
    ).toBe('https://b.example');
  });

  it('superset_of not within value', () => {
    expect(() => resolve({ algs: { superset_of: ['ES256', 'ES512'] } }, { algs: { value: ['ES256'] } })).toThrow(
      'metadata policy: openid_credential_issuer.algs: value is not a superset of superset_of',
    );
    expect(resolve({ algs: { superset_of: ['ES256'] } }, { algs: { value: ['ES256', 'ES512'] } })?.algs).toEqual(['ES256', 'ES512']);
  });

  it('add outside value, and add outside subset_of', () => {
    expect(() => resolve({ algs: { value: ['ES256'] } }, { algs: { add: ['ES512'] } })).toThrow(
      'metadata policy: openid_credential_issuer.algs: add is not a subset of value',
    );
    expect(() => resolve({ algs: { add: ['ES512'], subset_of: ['ES256', 'ES384'] } })).toThrow(
      'metadata policy: openid_credential_issuer.algs: add is not a subset of subset_of',
    );
    expect(() => resolve({ algs: { subset_of: ['ES256', 'ES384'] } }, { algs: { add: ['ES512'] } })).toThrow(
      /add is not a subset of subset_of/,
    );
    expect(resolve({ algs: { subset_of: ['ES256', 'ES512'] } }, { algs: { add: ['ES512'] } })?.algs).toEqual(['ES256', 'ES512']);
  });

  it('value null cannot be undone by a subordinate: add or default beside it refuses', () => {
    expect(() => resolve({ logo: { value: null } }, { logo: { default: 'https://logo.example' } })).toThrow(
      'metadata policy: openid_credential_issuer.logo: value null removes the parameter, which add or default would set again',
    );
    expect(() => resolve({ algs: { value: null } }, { algs: { add: ['ES512'] } })).toThrow(
      'metadata policy: openid_credential_issuer.algs: value null removes the parameter, which add or default would set again',
    );
  });

  it('value null removes the parameter whatever the other operators list', () => {
    expect(
      resolve({ scopes: { subset_of: ['pid'], superset_of: ['pid'], one_of: ['pid'] } }, { scopes: { value: null } }),
    ).not.toHaveProperty('scopes');
    expect(resolve({ logo: { value: null } })).toEqual(LEAF.openid_credential_issuer);
  });
});

describe('policies for what the leaf does not have', () => {
  it('default fills an absent parameter; essential refuses it; one_of, subset_of and superset_of leave it absent', () => {
    expect(resolve({ logo: { default: 'https://logo.example' } })).toEqual({
      ...LEAF.openid_credential_issuer,
      logo: 'https://logo.example',
    });
    expect(() => resolve({ logo: { one_of: ['https://logo.example'], essential: true } })).toThrow(
      'metadata policy: openid_credential_issuer.logo is essential and absent',
    );
    expect(
      resolve({ logo: { one_of: ['https://logo.example'] }, grants: { subset_of: ['authorization_code'] }, tags: { superset_of: ['a'] } }),
    ).toEqual(LEAF.openid_credential_issuer);
  });

  it('a policy for an entity type the leaf lacks constrains nothing and adds nothing', () => {
    const policy = combinePolicies([
      { policy: { openid_relying_party: { client_name: { essential: true, value: 'RP' } } }, crit: [] },
      { policy: { openid_credential_issuer: { algs: { add: ['ES512'] } } }, crit: [] },
    ]);
    expect(applyPolicy(LEAF, policy)).toEqual({
      openid_credential_issuer: { ...LEAF.openid_credential_issuer, algs: ['ES256', 'ES384', 'ES512'] },
    });
  });

  it("the leaf's metadata itself is left as it was", () => {
    const before = structuredClone(LEAF);
    resolve({ display: { value: null }, algs: { add: ['ES512'] }, scopes: { subset_of: ['pid'] } });
    expect(LEAF).toEqual(before);
  });
});

describe('malformed policies refuse, naming where', () => {
  const refusal =
    (policy: unknown, crit: string[] = []) =>
    () =>
      combinePolicies([{ policy, crit }]);

  it('a metadata_policy, an entity type or a parameter that is not an object', () => {
    expect(refusal(['value'])).toThrow('metadata policy: metadata_policy is not an object');
    expect(refusal('policy')).toThrow('metadata policy: metadata_policy is not an object');
    expect(refusal({ openid_credential_issuer: ['algs'] })).toThrow(
      'metadata policy: openid_credential_issuer is not an object of parameters',
    );
    expect(refusal({ openid_credential_issuer: { algs: 'ES256' } })).toThrow(
      'metadata policy: openid_credential_issuer.algs is not an object of operators',
    );
    expect(refusal({ openid_credential_issuer: { algs: null } })).toThrow(/algs is not an object of operators/);
  });

  it('a list operator that is not a list, an essential that is not a boolean', () => {
    // A scalar add (older drafts' examples) is refused too: union() of a string would throw a TypeError, not a refusal.
    for (const operator of ['one_of', 'subset_of', 'superset_of', 'add']) {
      expect(refusal({ openid_credential_issuer: { algs: { [operator]: 'ES256' } } })).toThrow(
        `metadata policy: openid_credential_issuer.algs.${operator} is not an array`,
      );
    }
    expect(refusal({ openid_credential_issuer: { logo: { essential: 'yes' } } })).toThrow(
      'metadata policy: openid_credential_issuer.logo.essential is not a boolean',
    );
  });

  it('a malformed lower level refuses even after a well-formed superior', () => {
    expect(() =>
      combinePolicies([
        { policy: { openid_credential_issuer: { algs: { one_of: ['ES256'] } } }, crit: [] },
        { policy: { openid_credential_issuer: { algs: { one_of: 'ES256' } } }, crit: [] },
      ]),
    ).toThrow('metadata policy: openid_credential_issuer.algs.one_of is not an array');
  });
});

describe('operators this service does not know', () => {
  const policy = { openid_credential_issuer: { credential_issuer: { regexp: '^x', value: 'https://other.example' } } };

  it('left out when no statement marks them critical; the known operators beside them still apply', () => {
    expect(combinePolicies([{ policy, crit: ['intersects'] }])).toEqual({
      openid_credential_issuer: { credential_issuer: { value: 'https://other.example' } },
    });
    expect(applyPolicy(LEAF, combinePolicies([{ policy, crit: [] }])).openid_credential_issuer?.credential_issuer).toBe(
      'https://other.example',
    );
  });

  it('refused when the statement that uses them marks them critical', () => {
    expect(() => combinePolicies([{ policy, crit: ['intersects', 'regexp'] }])).toThrow(
      'metadata policy: openid_credential_issuer.credential_issuer uses the critical operator regexp, which this service does not understand',
    );
  });
});
