// RFC 9901 section 7.1 over crafted Issuer-signed payloads and Disclosures, without signatures (the
// check runs after the issuer signature was verified; sd-jwt-disclosures.test.ts shows it through
// the response endpoint): each Disclosure referenced exactly once, from the right place, no digest
// twice, sha-256 only, and a refusal that names the Disclosure but never its value.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkDisclosureReferences, presentedDisclosures } from '../../src/formats/sd-jwt-vc/disclosures.js';
import { PresentationRejected } from '../../src/verification/errors.js';

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const digestOf = (encoded: string) => createHash('sha256').update(encoded).digest('base64url');

interface Made {
  encoded: string;
  digest: string;
}
/** An object-property Disclosure [salt, name, value]. */
const property = (name: string, value: unknown, salt = 'salt'): Made => {
  const encoded = encode([salt, name, value]);
  return { encoded, digest: digestOf(encoded) };
};
/** An array-element Disclosure [salt, value]. */
const element = (value: unknown, salt = 'salt'): Made => {
  const encoded = encode([salt, value]);
  return { encoded, digest: digestOf(encoded) };
};
const raw = (encoded: string): Made => ({ encoded, digest: digestOf(encoded) });

function outcome(payload: Record<string, unknown>, disclosures: Made[]): string {
  try {
    checkDisclosureReferences(
      payload,
      disclosures.map((d) => d.encoded),
    );
    return 'accepted';
  } catch (err) {
    return err instanceof PresentationRejected ? err.message : `not a rejection: ${String(err)}`;
  }
}

describe('checkDisclosureReferences', () => {
  it('accepts properties, array elements, recursive Disclosures, decoy digests and no Disclosures at all', () => {
    const street = property('street', 'Main St');
    const address = property('address', { _sd: [street.digest], country: 'DE' });
    const nationality = element('DE');
    const nested = element({ _sd: [property('code', 'X').digest] });
    const code = property('code', 'X');
    const payload = {
      _sd: [address.digest, digestOf('decoy')],
      nationalities: [{ '...': nationality.digest }, { '...': nested.digest }, { '...': digestOf('decoy element') }, 'clear'],
      clear: { deeper: [{ _sd: [] }] },
      _sd_alg: 'sha-256',
    };
    expect(outcome(payload, [address, street, nationality, nested, code])).toBe('accepted');
    expect(outcome({ _sd: [address.digest] }, [])).toBe('accepted');
    // A digest under a claim in the clear counts too.
    expect(outcome({ clear: { _sd: [street.digest] } }, [street])).toBe('accepted');
  });

  it('takes sha-256 by default and only sha-256', () => {
    const given = property('given_name', 'Erika');
    expect(outcome({ _sd: [given.digest] }, [given])).toBe('accepted');
    expect(outcome({ _sd: [given.digest], _sd_alg: 'sha-256' }, [given])).toBe('accepted');
    expect(outcome({ _sd: [given.digest], _sd_alg: 'sha-512' }, [given])).toBe(
      "credential: _sd_alg 'sha-512' is not supported (sha-256 only)",
    );
    expect(outcome({ _sd: [given.digest], _sd_alg: 42 }, [given])).toBe("credential: _sd_alg '42' is not supported (sha-256 only)");
    // Not a member inherited from Object.prototype either.
    expect(outcome({ _sd: [given.digest], _sd_alg: 'constructor' }, [given])).toBe(
      "credential: _sd_alg 'constructor' is not supported (sha-256 only)",
    );
  });

  it('refuses a Disclosure presented twice, and one no digest references', () => {
    const given = property('given_name', 'Erika');
    const family = property('family_name', 'Mustermann');
    expect(outcome({ _sd: [given.digest] }, [given, given])).toBe(
      `credential: disclosure 2 (claim 'given_name', digest ${given.digest}) is presented twice (also as disclosure 1)`,
    );
    expect(outcome({ _sd: [given.digest] }, [given, family])).toBe(
      `credential: disclosure 2 (claim 'family_name', digest ${family.digest}) is referenced by no digest of the credential (RFC 9901 section 7.1)`,
    );
    const value = element('secret value');
    expect(outcome({ list: [] }, [value])).toBe(
      `credential: disclosure 1 (an array element, digest ${value.digest}) is referenced by no digest of the credential (RFC 9901 section 7.1)`,
    );
    // A Disclosure referenced only from the value of an unreferenced one is not referenced either.
    const inner = property('inner', 1);
    const outer = property('outer', { _sd: [inner.digest] });
    expect(outcome({ _sd: [] }, [outer, inner])).toMatch(/^credential: disclosure 1 \(claim 'outer'/);
  });

  it('refuses a Disclosure that is not a base64url JSON array [salt, name, value] or [salt, value], or that discloses a reserved name', () => {
    const malformed = (position: number) =>
      `credential: disclosure ${position} is not a base64url-encoded JSON array [salt, name, value] or [salt, value]`;
    const given = property('given_name', 'Erika');
    for (const bad of [
      raw('WyJzYWx0Iiwi+Il0'),
      raw(`${given.encoded}=`),
      // Characters base64url decoding would skip, before or inside.
      raw(` ${given.encoded}`),
      raw(`${given.encoded.slice(0, 4)}.${given.encoded.slice(4)}`),
      raw(Buffer.from('not json').toString('base64url')),
      raw(encode({ salt: 'a', name: 'b' })),
      raw(encode([1, 'name', 'value'])),
      raw(encode(['salt'])),
      raw(encode(['salt', 'name', 'value', 'extra'])),
      raw(encode(['salt', 42, 'value'])),
    ]) {
      expect(outcome({ _sd: [given.digest, bad.digest] }, [given, bad]), bad.encoded).toBe(malformed(2));
    }
    for (const reserved of ['_sd', '...']) {
      const disclosure = property(reserved, []);
      expect(outcome({ _sd: [disclosure.digest] }, [disclosure])).toBe(
        `credential: disclosure 1 discloses the reserved name '${reserved}'`,
      );
    }
  });

  it('refuses a digest that is not a string, or that appears twice', () => {
    const given = property('given_name', 'Erika');
    expect(outcome({ _sd: [42] }, [])).toBe('credential: a digest of the credential is not a string');
    expect(outcome({ list: [{ '...': 42 }] }, [])).toBe('credential: a digest of the credential is not a string');
    expect(outcome({ _sd: [given.digest, given.digest] }, [given])).toBe(
      `credential: digest '${given.digest}' appears more than once in the credential (RFC 9901 section 7.1)`,
    );
    expect(outcome({ _sd: [given.digest], nested: { _sd: [given.digest] } }, [given])).toMatch(/appears more than once/);
    // A decoy digest twice as well.
    expect(outcome({ _sd: ['decoy', 'decoy'] }, [])).toBe(
      "credential: digest 'decoy' appears more than once in the credential (RFC 9901 section 7.1)",
    );
    // A Disclosure whose value references itself ends in the same refusal (the walk ends).
    const selfish = property('self', { _sd: ['placeholder'] });
    const loop = property('loop', { _sd: [] });
    const twice = element(null);
    expect(outcome({ list: [{ '...': twice.digest }, { '...': twice.digest }] }, [twice])).toMatch(/appears more than once/);
    expect(outcome({ _sd: [loop.digest] }, [loop, selfish])).toMatch(/disclosure 2 .* is referenced by no digest/);
  });

  it('refuses a Disclosure referenced from the wrong place, or one that replaces a claim in the clear', () => {
    const given = property('given_name', 'Erika');
    const value = element('DE');
    expect(outcome({ list: [{ '...': given.digest }] }, [given])).toBe(
      `credential: disclosure 1 (claim 'given_name', digest ${given.digest}) is an object property, referenced as an array element`,
    );
    expect(outcome({ _sd: [value.digest] }, [value])).toBe(
      `credential: disclosure 1 (an array element, digest ${value.digest}) is an array element, referenced from an object's _sd`,
    );
    expect(outcome({ _sd: [given.digest], given_name: 'Eve' }, [given])).toBe(
      `credential: disclosure 1 (claim 'given_name', digest ${given.digest}) discloses a claim its object already has`,
    );
    // Two Disclosures of one name in one object.
    const again = property('given_name', 'Eve', 'other salt');
    expect(outcome({ _sd: [given.digest, again.digest] }, [given, again])).toBe(
      `credential: disclosure 2 (claim 'given_name', digest ${again.digest}) discloses a claim its object already has`,
    );
    // In another object the name is free.
    expect(outcome({ _sd: [given.digest], nested: { given_name: 'Eve' } }, [given])).toBe('accepted');
  });

  it('refuses an _sd that is not an array, and reads {"...": digest} only as an element of exactly that one member', () => {
    const given = property('given_name', 'Erika');
    expect(outcome({ _sd: given.digest }, [given])).toBe('credential: an _sd member of the credential is not an array of digests');
    expect(outcome({ nested: { _sd: {} } }, [])).toBe('credential: an _sd member of the credential is not an array of digests');
    const value = element('DE');
    // Two members: not a digest reference, so the Disclosure is referenced by nothing.
    expect(outcome({ list: [{ '...': value.digest, other: 1 }] }, [value])).toMatch(/is referenced by no digest/);
    expect(outcome({ list: [{ '...': value.digest }] }, [value])).toBe('accepted');
    // Outside an array, '...' is a claim like any other.
    expect(outcome({ object: { '...': value.digest } }, [value])).toMatch(/is referenced by no digest/);
    // Inside an array, an element that is not a reference is walked.
    expect(outcome({ list: [[{ '...': value.digest }]] }, [value])).toBe('accepted');
    expect(outcome({ list: [{ nested: { _sd: [given.digest] } }] }, [given])).toBe('accepted');
    expect(outcome({ list: [null, 1, 'x'] }, [])).toBe('accepted');
  });

  it('names a claim as an error_description can show it: no quote, backslash or control character, at most 64 characters', () => {
    const odd = property(`a"b\\c'\n${'x'.repeat(100)}`, 1);
    const message = outcome({}, [odd]);
    expect(message).toBe(
      `credential: disclosure 1 (claim 'a?b?c??${'x'.repeat(57)}', digest ${odd.digest}) is referenced by no digest of the credential (RFC 9901 section 7.1)`,
    );
    // Printable characters around the excluded ones stay.
    const printable = property(' !#&(~[]', 1);
    expect(outcome({}, [printable])).toContain("claim ' !#&(~[]'");
  });
});

describe('presentedDisclosures', () => {
  it('are the parts between the Issuer-signed JWT and the KB-JWT, as presented', () => {
    expect(presentedDisclosures('jwt~one~two~kb.jwt')).toEqual(['one', 'two']);
    expect(presentedDisclosures('jwt~one~')).toEqual(['one']);
    expect(presentedDisclosures('jwt~')).toEqual([]);
  });
});
