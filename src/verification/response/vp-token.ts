// The vp_token of an OpenID4VP 1.0 response: a JSON object from credential query id to a non-empty
// array of presentations (strings). Pre-1.0 shapes (a bare string per query) are refused.
import { z } from 'zod';
import { PROTOTYPE_MEMBER_RULE, prototypeMemberPath } from '../../platform/json.js';
import { PresentationRejected } from '../errors.js';

const VpToken = z.record(z.string(), z.array(z.string()).min(1));

export function parseVpToken(raw: unknown): Record<string, string[]> {
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      throw new PresentationRejected('vp_token must be a JSON object keyed by credential query id');
    }
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new PresentationRejected('vp_token must be a JSON object keyed by credential query id');
  if (Object.keys(value).length === 0) throw new PresentationRejected('vp_token holds no presentation');
  const forbidden = prototypeMemberPath(value, 'vp_token');
  if (forbidden) throw new PresentationRejected(`${forbidden} ${PROTOTYPE_MEMBER_RULE}`);
  const parsed = VpToken.safeParse(value);
  if (!parsed.success) throw new PresentationRejected('each vp_token entry must be a non-empty array of presentations');
  return parsed.data;
}
