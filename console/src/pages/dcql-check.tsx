// The DCQL query of a presentation configuration checked while it is typed, by the same dcql library
// the service uses, so most mistakes show before saving. The service checks again when it is saved
// (and knows more: trust lists, formats it can verify).
import { DcqlQuery } from 'dcql';
import { parsedJson } from '../components.js';

interface Issue {
  path?: { key: unknown }[];
  message: string;
}

export function DcqlCheck({ body }: { body: string }) {
  const parsed = parsedJson(body)?.value as { dcql_query?: unknown } | undefined;
  if (!parsed || typeof parsed !== 'object' || parsed.dcql_query === undefined) return null;
  const verdict = check(parsed.dcql_query);
  return verdict.ok ? (
    <p class="dcql-ok" data-testid="dcql-check">
      DCQL query valid: {verdict.summary}
    </p>
  ) : (
    <div class="field-error" data-testid="dcql-check" role="alert">
      DCQL query invalid: {verdict.errors.join('; ')}
    </div>
  );
}

function check(query: unknown): { ok: true; summary: string } | { ok: false; errors: string[] } {
  try {
    const parsed = DcqlQuery.parse(query as never);
    DcqlQuery.validate(parsed);
    const credentials = parsed.credentials.map((c) => `${c.id} (${c.format})`).join(', ');
    return { ok: true, summary: `${parsed.credentials.length} credential${parsed.credentials.length === 1 ? '' : 's'}: ${credentials}` };
  } catch (err) {
    const issues = (err as { issues?: Issue[] }).issues;
    if (!issues?.length) return { ok: false, errors: [(err as Error).message] };
    return {
      ok: false,
      errors: issues.slice(0, 5).map((i) => {
        const at = i.path?.map((p) => String(p.key)).join('.');
        return at ? `dcql_query.${at}: ${i.message}` : i.message;
      }),
    };
  }
}
