// The credential and presentation configurations most tests share: an SD-JWT VC PID with given
// name, family name and an age-over-18 flag, an mdoc mDL, and the DCQL query an adult check sends.
// PID and mdl are checked against the body POST /api/issuer/credentials takes (satisfies keeps their literal types).
import type { Operation, RequestBodyOf } from './api-types.js';

type CredentialConfigBody = RequestBodyOf<Operation<'/api/issuer/credentials', 'POST'>>;

export const PID_VCT = 'urn:eudi:pid:1';
export const MDL_DOC_TYPE = 'org.iso.18013.5.1.mDL';
export const MDL_NAMESPACE = 'org.iso.18013.5.1';

export const PID = {
  id: 'pid',
  config: { format: 'dc+sd-jwt' },
  vct: PID_VCT,
  fields: [
    { path: ['given_name'], type: 'string', mandatory: true },
    { path: ['family_name'], type: 'string', mandatory: true },
    { path: ['age_over_18'], type: 'boolean' },
  ],
} satisfies CredentialConfigBody;

/** An mDL with the given data elements (strings, except age_over_* flags). */
export const mdl = (elements: string[]) =>
  ({
    id: 'mdl',
    config: { format: 'mso_mdoc', docType: MDL_DOC_TYPE },
    fields: elements.map((name) => ({ path: [name], type: name.startsWith('age_over_') ? 'boolean' : 'string', namespace: MDL_NAMESPACE })),
  }) satisfies CredentialConfigBody;

/** The adult check: the given name, and age_over_18 true. */
export const PID_ADULT_QUERY = {
  credentials: [
    {
      id: 'pid',
      format: 'dc+sd-jwt',
      meta: { vct_values: [PID_VCT] },
      claims: [{ path: ['given_name'] }, { path: ['age_over_18'], values: [true] }],
    },
  ],
};

/** The mDL's adult check: the family name, and age_over_18 true. */
export const MDL_ADULT_QUERY = {
  credentials: [
    {
      id: 'mdl',
      format: 'mso_mdoc',
      meta: { doctype_value: MDL_DOC_TYPE },
      claims: [{ path: [MDL_NAMESPACE, 'family_name'] }, { path: [MDL_NAMESPACE, 'age_over_18'], values: [true] }],
    },
  ],
};
