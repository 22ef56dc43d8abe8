// The first view after log-in: what the tenant (or, for the service's own clients, the service) has,
// one tile per part, and the next step where a part is empty. A tile is shown only when the roles
// allow the call behind it; each tile loads on its own, so the calls run in parallel and one refused
// or failed call is a short message in its tile, never a broken page.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, holds, type Problem, type Result, type Role, result, session } from '../api.js';
import { daysLeft, expiresSoon, summarizeChain } from '../certificates.js';
import { formatDate } from '../components.js';

interface TileDefinition<T> {
  title: string;
  /** Any one of these lets the call behind the tile through (as its route requires). */
  roles: Role[];
  load: () => Promise<Result<T>>;
  show: (data: T) => ComponentChildren;
}

const tile = <T,>(definition: TileDefinition<T>) => definition as TileDefinition<unknown>;

/** A link to the next step, where a part is empty: "No credential configuration yet: create one". */
function NextStep({ text, href, action }: { text: string; href: string; action: string }) {
  return (
    <p>
      {text}: <a href={href}>{action}</a>
    </p>
  );
}

function Count({ n, one, many }: { n: number; one: string; many: string }) {
  return (
    <p>
      <span class="tile-count">{n}</span> {n === 1 ? one : many}
    </p>
  );
}

/** A list's length, or the next step when it is empty, and a link to the section. */
function listTile<T>(options: {
  title: string;
  roles: Role[];
  load: () => Promise<Result<T[]>>;
  one: string;
  many: string;
  route: string;
  empty: string;
  create: string;
  more?: (rows: T[]) => ComponentChildren;
}) {
  return tile<T[]>({
    title: options.title,
    roles: options.roles,
    load: options.load,
    show: (rows) =>
      rows.length === 0 ? (
        <NextStep text={options.empty} href={`#/${options.route}`} action={options.create} />
      ) : (
        <>
          <Count n={rows.length} one={options.one} many={options.many} />
          {options.more?.(rows)}
          <p>
            <a href={`#/${options.route}`}>Manage {options.many}</a>
          </p>
        </>
      ),
  });
}

type KeyChain = { id: string; activeCertificate?: string | null; rootCertificate?: string | null };

/** The certificate of any key chain that expires first, and the chain that holds it. */
function soonestExpiry(chains: KeyChain[]): { chainId: string; notAfter: Date } | undefined {
  const expiries = chains.flatMap((chain) =>
    summarizeChain([chain.activeCertificate, chain.rootCertificate].filter(Boolean).join('\n')).map((c) => ({
      chainId: chain.id,
      notAfter: c.notAfter,
    })),
  );
  return expiries.sort((a, b) => a.notAfter.getTime() - b.notAfter.getTime())[0];
}

function Expiry({ chains }: { chains: KeyChain[] }) {
  const soonest = soonestExpiry(chains);
  if (!soonest) return <p class="muted">No certificate to expire.</p>;
  const when = formatDate(soonest.notAfter.toISOString());
  if (soonest.notAfter.getTime() <= Date.now()) {
    return (
      <p class="warning">
        The certificate of {soonest.chainId} expired on {when}
      </p>
    );
  }
  const days = daysLeft(soonest.notAfter);
  return (
    <p class={expiresSoon(soonest.notAfter) ? 'warning' : undefined}>
      Soonest certificate expiry: {soonest.chainId}, {when} (in {days} {days === 1 ? 'day' : 'days'})
    </p>
  );
}

const OPEN_STATUSES = ['active', 'fetched'] as const;
const openSessions = async (): Promise<Result<number>> => {
  const pages = await Promise.all(
    OPEN_STATUSES.map((status) => result(api.GET('/api/session', { params: { query: { status, pageSize: 1 } } }))),
  );
  const problem = pages.find((p) => p.problem)?.problem;
  return problem ? { problem } : { data: pages.reduce((sum, p) => sum + (p.data?.total ?? 0), 0) };
};

const SHOWN_FAILURES = 3;
const CONFORMANCE_ROLES: Role[] = ['issuance:manage', 'presentation:manage'];

const TENANT_TILES = [
  listTile({
    title: 'Credential configurations',
    roles: ['issuance:manage'],
    load: () => result(api.GET('/api/issuer/credentials')),
    one: 'credential configuration',
    many: 'credential configurations',
    route: 'credential-configs',
    empty: 'No credential configuration yet',
    create: 'create a credential configuration',
  }),
  listTile({
    title: 'Presentation configurations',
    roles: ['presentation:manage'],
    load: () => result(api.GET('/api/verifier/config')),
    one: 'presentation configuration',
    many: 'presentation configurations',
    route: 'presentation-configs',
    empty: 'No presentation configuration yet',
    create: 'create a presentation configuration',
  }),
  listTile<KeyChain>({
    title: 'Key chains',
    roles: ['issuance:manage', 'presentation:manage'],
    load: () => result(api.GET('/api/key-chain')),
    one: 'key chain',
    many: 'key chains',
    route: 'key-chains',
    empty: 'No key chain yet',
    create: 'create a key chain',
    more: (chains) => <Expiry chains={chains} />,
  }),
  listTile({
    title: 'Trust lists',
    roles: ['presentation:manage', 'issuance:manage'],
    load: () => result(api.GET('/api/trust-list')),
    one: 'trust list',
    many: 'trust lists',
    route: 'trust-lists',
    empty: 'No trust list yet',
    create: 'create a trust list',
  }),
  tile<number>({
    title: 'Open sessions',
    roles: ['issuance:manage', 'issuance:offer', 'presentation:manage', 'presentation:request'],
    load: openSessions,
    show: (open) => (
      <>
        <Count n={open} one="session active or fetched" many="sessions active or fetched" />
        {open === 0 && holds(session(), ['issuance:offer']) && <NextStep text="None open" href="#/offers" action="issue a credential" />}
        <p>
          <a href="#/sessions">Go to the sessions</a>
        </p>
      </>
    ),
  }),
  tile({
    title: 'Failed webhook deliveries',
    roles: ['issuance:manage', 'presentation:manage'],
    load: () => result(api.GET('/api/webhook-deliveries', { params: { query: { state: 'failed', pageSize: SHOWN_FAILURES } } })),
    show: (page) => (
      <>
        <Count n={page.total} one="delivery failed" many="deliveries failed" />
        {page.items.length > 0 && (
          <ul aria-label="newest failed deliveries">
            {page.items.map((d) => (
              <li key={d.id}>
                <a href={`#/sessions/${encodeURIComponent(d.sessionId)}`}>
                  {d.type} to {d.endpoint}
                </a>{' '}
                <span class="muted">{formatDate(d.createdAt)}</span>
              </li>
            ))}
          </ul>
        )}
      </>
    ),
  }),
  tile({
    title: 'HAIP 1.0 conformance',
    roles: CONFORMANCE_ROLES,
    load: () => result(api.GET('/api/conformance', { params: { query: { profile: 'haip-1.0' } } })),
    show: (report) => {
      const count = (status: string) => report.requirements.filter((r) => r.status === status).length;
      return (
        <>
          <p>
            <span class={count('not-met') > 0 ? 'attention' : undefined}>Not met: {count('not-met')}</span> · Met: {count('met')} · Not
            applicable: {count('not-applicable')}
          </p>
          <p>
            <a href="#/conformance">See each requirement</a>
          </p>
        </>
      );
    },
  }),
];

const SERVICE_TILES = [
  tile({
    title: 'Tenants',
    roles: ['tenants:manage'],
    load: () => result(api.GET('/api/tenant')),
    show: (tenants) => {
      if (tenants.length === 0) return <NextStep text="No tenant yet" href="#/tenants" action="create a tenant" />;
      const active = tenants.filter((t) => t.status === 'active').length;
      return (
        <>
          <Count n={tenants.length} one="tenant" many="tenants" />
          <p>
            Active: {active} · Not active: {tenants.length - active}
          </p>
          <p>
            <a href="#/tenants">Manage tenants</a>
          </p>
        </>
      );
    },
  }),
  tile({
    title: 'Service clients',
    roles: ['tenants:manage', 'clients:manage'],
    load: () => result(api.GET('/api/client')),
    show: (clients) => {
      const own = clients.filter((c) => c.tenantId === null).length;
      return (
        <>
          <Count n={own} one="client of the service" many="clients of the service" />
          <p class="muted">and {clients.length - own} of tenants</p>
          <p>
            <a href="#/service-clients">Manage clients</a>
          </p>
        </>
      );
    },
  }),
  tile({
    title: 'Recent audit',
    roles: ['tenants:manage'],
    load: () => result(api.GET('/api/admin/audit-logs', { params: { query: { limit: 5 } } })),
    show: (entries) =>
      entries.length === 0 ? (
        <p class="muted">Nothing recorded yet.</p>
      ) : (
        <>
          <ul aria-label="newest audit entries">
            {entries.map((e) => (
              <li key={e.id}>
                <code>{e.actionType}</code> by {e.actorDisplay ?? e.actorId} <span class="muted">{formatDate(e.timestamp)}</span>
              </li>
            ))}
          </ul>
          <p>
            <a href="#/audit">See the audit log</a>
          </p>
        </>
      ),
  }),
];

/** What a call that did not answer says in its tile: the status and title, or that it failed. */
const shortProblem = (problem: Problem) =>
  problem.status === 403 ? 'Not allowed for your roles.' : `Could not load: ${problem.status} ${problem.title}`;

function Tile({ definition }: { definition: TileDefinition<unknown> }) {
  const [state, setState] = useState<{ data?: unknown; message?: string; loaded: boolean }>({ loaded: false });
  useEffect(() => {
    definition.load().then(
      ({ data, problem }) => setState(problem ? { message: shortProblem(problem), loaded: true } : { data, loaded: true }),
      (err: Error) => setState({ message: `Could not load: ${err.message}`, loaded: true }),
    );
  }, [definition]);
  const id = `tile-${definition.title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  return (
    <section class="card" aria-labelledby={id} aria-busy={!state.loaded}>
      <h3 id={id}>{definition.title}</h3>
      {!state.loaded ? (
        <p class="muted">Loading…</p>
      ) : state.message ? (
        <p class="muted" role="status">
          {state.message}
        </p>
      ) : (
        definition.show(state.data)
      )}
    </section>
  );
}

export function HomePage() {
  const who = session();
  const tiles = (who?.tenantId ? TENANT_TILES : SERVICE_TILES).filter((t) => holds(who, t.roles));
  return (
    <>
      <h2>Home</h2>
      <p class="muted">{who?.tenantId ? `What tenant ${who.tenantId} has, and what to do next.` : 'What the service has.'}</p>
      {tiles.length === 0 ? (
        <p class="muted">Your roles open none of these overviews; the navigation lists what you may open.</p>
      ) : (
        <div class="tiles">
          {tiles.map((t) => (
            <Tile key={t.title} definition={t} />
          ))}
        </div>
      )}
    </>
  );
}
