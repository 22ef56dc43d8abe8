// The claims a presentation session verified, one row per claim value: which credential (the DCQL
// query it answered, and its format), the claim's path, and the value. Nested objects and arrays
// become longer paths, so that every value reads as text; the credentials as JSON stay one click away.
import { JsonBlock, Table } from '../components.js';

export interface ClaimRow {
  credential: string;
  path: string;
  value: string;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Each leaf of `value` under `path`, the path's segments joined by " › " (array items by their index). */
function leaves(value: unknown, path: string[]): { path: string[]; value: string }[] {
  if (Array.isArray(value)) {
    if (value.length === 0) return [{ path, value: '(none)' }];
    return value.flatMap((item, i) => leaves(item, [...path, String(i)]));
  }
  if (isObject(value)) {
    const entries = Object.entries(value);
    if (entries.length === 0) return [{ path, value: '(empty)' }];
    return entries.flatMap(([key, item]) => leaves(item, [...path, key]));
  }
  return [{ path, value: typeof value === 'string' ? value : JSON.stringify(value) }];
}

/** The name a credential goes by: the query it answered, with its format. */
function credentialName(credential: Json, index: number) {
  const query = typeof credential.queryId === 'string' ? credential.queryId : `credential ${index + 1}`;
  return typeof credential.format === 'string' ? `${query} (${credential.format})` : query;
}

export function claimRows(credentials: Json[]): ClaimRow[] {
  return credentials.flatMap((credential, index) => {
    // A verified credential keeps its disclosed claims under `claims`; anything else is shown whole.
    const claims = Object.hasOwn(credential, 'claims') ? credential.claims : credential;
    const name = credentialName(credential, index);
    return leaves(claims, []).map((leaf) => ({ credential: name, path: leaf.path.join(' › '), value: leaf.value }));
  });
}

export function VerifiedClaims({ credentials }: { credentials: Json[] }) {
  return (
    <section class="card" aria-label="verified claims">
      <h3>Verified claims</h3>
      <div data-testid="verified-claims">
        <Table
          label="disclosed values"
          rows={claimRows(credentials)}
          empty="The presentation disclosed no claims."
          columns={[
            { title: 'Credential', cell: (r) => r.credential },
            { title: 'Claim', cell: (r) => <code>{r.path}</code> },
            { title: 'Value', cell: (r) => <span class="claim-value">{r.value}</span> },
          ]}
        />
      </div>
      <details>
        <summary>Verified credentials as JSON</summary>
        <JsonBlock value={credentials} label="presented credentials JSON" />
      </details>
    </section>
  );
}
