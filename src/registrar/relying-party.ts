// The tenant's relying party at the registrar, the first step of every certificate request. Not
// stored: the registrar owns it, and looking it up each time follows a change made there.
import { Problem } from '../platform/http/problem.js';
import type { RegistrarService } from './service.js';

const idOf = (value: unknown): string | undefined => {
  const id = (value as { id?: unknown } | null)?.id;
  return typeof id === 'string' && id.length > 0 ? id : undefined;
};

/** The id of the account's relying party (the first the registrar lists), registered when there is none. */
export async function relyingPartyId(registrar: RegistrarService, tenantId: string): Promise<string> {
  const listed = await registrar.call(tenantId, 'GET', '/relying-parties');
  if (!Array.isArray(listed))
    throw new Problem(502, 'Bad Gateway', 'the registrar answered its relying parties with something other than a list');
  if (listed.length > 0) {
    const existing = idOf(listed[0]);
    if (!existing) throw new Problem(502, 'Bad Gateway', 'the registrar listed a relying party without an id');
    return existing;
  }
  const created = idOf(await registrar.call(tenantId, 'POST', '/relying-parties', { body: {} }));
  if (!created) throw new Problem(502, 'Bad Gateway', 'the registrar registered a relying party but answered without its id');
  return created;
}
