// The svc console: a single page on the management API, with hash routes (#/tenants, #/sessions/{id})
// so the service serves one document for every view. The navigation shows the sections the roles of
// the signed-in client or person open (from GET /api/whoami), Home first and the rest in groups (Issue,
// Verify, Trust, Keys, Administration); on a narrow screen it folds behind a Menu button.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import {
  backToService,
  canGoBackToService,
  holds,
  logOut,
  onSessionChange,
  type Role,
  resumeSession,
  type Session,
  session,
} from './api.js';
import { AuditPage } from './pages/audit.js';
import { CachesPage } from './pages/caches.js';
import { ConformancePage } from './pages/conformance.js';
import { CredentialConfigDetail } from './pages/credential-config-detail.js';
import { PresentationConfigPage, TrustListPage } from './pages/dcql-trust-details.js';
import { HomePage } from './pages/home.js';
import { KeyChainDetail } from './pages/key-chain-detail.js';
import { LoginPage } from './pages/login.js';
import { OffersPage } from './pages/offers.js';
import { PresentationsPage } from './pages/presentations.js';
import { RegistrarPage } from './pages/registrar.js';
import { type ResourceDefinition, ResourcePage } from './pages/resource.js';
import * as resources from './pages/resources.js';
import { SchemaMetadataPage } from './pages/schema-metadata.js';
import { SessionPage, SessionsPage } from './pages/sessions.js';
import { issuerSettings, type Settings, SettingsPage, sessionSettings, statusListSettings, trustSettings } from './pages/settings.js';

/**
 * Where the navigation lists a view, as an operator looks for it. Sessions are under Administration:
 * they hold issuance and presentation alike (under Issue a verifier would not look for them), and sit
 * there with the other records of what happened (audit log, webhook endpoints).
 */
const GROUPS = ['Issue', 'Verify', 'Trust', 'Keys', 'Administration'] as const;
type Group = (typeof GROUPS)[number];

interface View {
  route: string;
  label: string;
  /** The navigation's group; none: above the groups (Home). */
  group?: Group;
  /** Shown to a client of a tenant, to the service's own clients (tenants:manage), or to both. */
  for: 'tenant' | 'service' | 'both';
  /** Any one of these opens the view (the roles its routes require); empty: any signed-in client. */
  roles: Role[];
  page: () => preact.JSX.Element;
}

const resource =
  <Row,>(definition: ResourceDefinition<Row>) =>
  () => <ResourcePage key={definition.title} definition={definition} />;
const settings = (definition: Settings) => () => <SettingsPage key={definition.title} settings={definition} />;
const ISSUANCE: Role[] = ['issuance:manage'];
const SESSION_READERS: Role[] = ['issuance:manage', 'issuance:offer', 'presentation:manage', 'presentation:request'];
const ANY_MANAGER: Role[] = [
  'presentation:manage',
  'issuance:manage',
  'clients:manage',
  'users:manage',
  'tenants:manage',
  'registrar:manage',
];

const VIEWS: View[] = [
  { route: 'home', label: 'Home', for: 'both', roles: [], page: () => <HomePage /> },
  {
    route: 'tenants',
    group: 'Administration',
    label: 'Tenants',
    for: 'service',
    roles: ['tenants:manage'],
    page: resource(resources.tenants),
  },
  {
    route: 'service-clients',
    group: 'Administration',
    label: 'Clients',
    for: 'service',
    roles: ['tenants:manage', 'clients:manage'],
    page: resource(resources.serviceClients),
  },
  { route: 'offers', group: 'Issue', label: 'Issue', for: 'tenant', roles: ['issuance:offer'], page: () => <OffersPage /> },
  {
    route: 'presentations',
    group: 'Verify',
    label: 'Verify',
    for: 'tenant',
    roles: ['presentation:request'],
    page: () => <PresentationsPage />,
  },
  { route: 'sessions', group: 'Administration', label: 'Sessions', for: 'tenant', roles: SESSION_READERS, page: () => <SessionsPage /> },
  {
    route: 'credential-configs',
    group: 'Issue',
    label: 'Credential configurations',
    for: 'tenant',
    roles: ISSUANCE,
    page: resource(resources.credentialConfigs),
  },
  {
    route: 'presentation-configs',
    group: 'Verify',
    label: 'Presentation configurations',
    for: 'tenant',
    roles: ['presentation:manage'],
    page: resource(resources.presentationConfigs),
  },
  {
    route: 'key-chains',
    group: 'Keys',
    label: 'Key chains',
    for: 'tenant',
    roles: resources.keyChains.roles,
    page: resource(resources.keyChains),
  },
  {
    route: 'trust-lists',
    group: 'Trust',
    label: 'Trust lists',
    for: 'tenant',
    roles: resources.trustLists.roles,
    page: resource(resources.trustLists),
  },
  { route: 'status-lists', group: 'Issue', label: 'Status lists', for: 'tenant', roles: ISSUANCE, page: resource(resources.statusLists) },
  {
    route: 'attribute-providers',
    group: 'Issue',
    label: 'Attribute providers',
    for: 'tenant',
    roles: ISSUANCE,
    page: resource(resources.attributeProviders),
  },
  {
    route: 'webhook-endpoints',
    group: 'Administration',
    label: 'Webhook endpoints',
    for: 'tenant',
    roles: ISSUANCE,
    page: resource(resources.webhookEndpoints),
  },
  {
    route: 'clients',
    group: 'Administration',
    label: 'Clients',
    for: 'tenant',
    roles: ['clients:manage'],
    page: resource(resources.clients),
  },
  { route: 'users', group: 'Administration', label: 'Users', for: 'tenant', roles: ['users:manage'], page: resource(resources.users) },
  { route: 'issuer-settings', group: 'Issue', label: 'Issuer settings', for: 'tenant', roles: ISSUANCE, page: settings(issuerSettings) },
  {
    route: 'status-list-config',
    group: 'Issue',
    label: 'Status list settings',
    for: 'tenant',
    roles: ISSUANCE,
    page: settings(statusListSettings),
  },
  { route: 'trust-config', group: 'Trust', label: 'Trust settings', for: 'tenant', roles: ISSUANCE, page: settings(trustSettings) },
  {
    route: 'session-config',
    group: 'Administration',
    label: 'Session retention',
    for: 'tenant',
    roles: ['issuance:manage', 'presentation:manage'],
    page: settings(sessionSettings),
  },
  {
    route: 'registrar',
    group: 'Administration',
    label: 'Registrar',
    for: 'tenant',
    roles: ['registrar:manage'],
    page: () => <RegistrarPage />,
  },
  {
    route: 'schema-metadata',
    group: 'Issue',
    label: 'Schema metadata',
    for: 'tenant',
    roles: ['registrar:manage', 'issuance:manage', 'presentation:manage'],
    page: () => <SchemaMetadataPage />,
  },
  {
    route: 'caches',
    group: 'Administration',
    label: 'Caches',
    for: 'tenant',
    roles: ['issuance:manage', 'presentation:manage'],
    page: () => <CachesPage />,
  },
  {
    route: 'conformance',
    group: 'Trust',
    label: 'Conformance',
    for: 'tenant',
    roles: ['issuance:manage', 'presentation:manage'],
    page: () => <ConformancePage />,
  },
  { route: 'audit', group: 'Administration', label: 'Audit log', for: 'both', roles: ANY_MANAGER, page: () => <AuditPage /> },
];

/**
 * Detail pages: `#/{route}/{id}` opens the page for one item of the section `route`, under the same
 * role check as the section. Each section with a detail page adds one line here.
 */
const DETAIL_PAGES = new Map<string, (id: string) => preact.JSX.Element>([
  ['sessions', (id) => <SessionPage id={id} />],
  ['presentation-configs', (id) => <PresentationConfigPage key={id} id={id} />],
  ['trust-lists', (id) => <TrustListPage key={id} id={id} />],
  ['credential-configs', (id) => <CredentialConfigDetail id={id} />],
  ['key-chains', (id) => <KeyChainDetail id={id} />],
]);

/** The views `who` may open. */
const viewsFor = (who: Session) =>
  VIEWS.filter((v) => (v.for === 'both' || v.for === (who.tenantId ? 'tenant' : 'service')) && holds(who, v.roles));

/** A section the signed-in client's roles (or kind: tenant or service) do not open. */
function NotAllowed({ route }: { route: string }) {
  const wanted = VIEWS.filter((v) => v.route === route);
  const roles = [...new Set(wanted.flatMap((v) => v.roles))];
  return (
    <section class="card" aria-label="not allowed">
      <h2>Not allowed for your roles</h2>
      <p>
        The section <code>#/{route}</code> is not allowed for your roles.
        {roles.length > 0 && ` It needs one of: ${roles.join(', ')}.`} The navigation lists the sections you may open.
      </p>
    </section>
  );
}

const currentRoute = () => location.hash.replace(/^#\/?/, '');

/**
 * The navigation: Home, then each group with a view the roles open, as a list named by the group's
 * title (a name, not a heading: the page's own headings stay the only ones below the console's title).
 */
function Navigation({ views, current, open }: { views: View[]; current?: View; open: boolean }) {
  const link = (v: View) => (
    <li key={v.route}>
      <a href={`#/${v.route}`} aria-current={v === current ? 'page' : undefined}>
        {v.label}
      </a>
    </li>
  );
  return (
    <nav id="sections" aria-label="sections" class={open ? 'open' : undefined}>
      <ul class="nav-list">{views.filter((v) => !v.group).map(link)}</ul>
      {GROUPS.map((group) => {
        const inGroup = views.filter((v) => v.group === group);
        if (inGroup.length === 0) return null;
        const id = `nav-${group.toLowerCase()}`;
        return (
          <div key={group} class="nav-group">
            <p id={id} class="nav-group-title">
              {group}
            </p>
            <ul class="nav-list" aria-labelledby={id}>
              {inGroup.map(link)}
            </ul>
          </div>
        );
      })}
    </nav>
  );
}

/** Who the session speaks for; an administrator in a tenant is named as such, with the way back. */
function Who({ who }: { who: Session }) {
  if (!who.actingAdminId) {
    return (
      <span class="who">
        {who.clientId}
        {who.tenantId ? ` · tenant ${who.tenantId}` : ' · service'}
      </span>
    );
  }
  return (
    <>
      <span class="who">
        admin {who.actingAdminId} in tenant {who.tenantId}
      </span>
      {canGoBackToService() && (
        <button
          type="button"
          class="secondary"
          onClick={async () => {
            await backToService();
            location.hash = '#/tenants';
          }}
        >
          Back to service
        </button>
      )}
    </>
  );
}

function App() {
  const [who, setWho] = useState<Session | undefined>(session());
  const [resuming, setResuming] = useState(true);
  const [route, setRoute] = useState(currentRoute());
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => onSessionChange(() => setWho(session())), []);
  useEffect(() => {
    void resumeSession().finally(() => setResuming(false));
  }, []);
  useEffect(() => {
    const onHash = () => {
      setRoute(currentRoute());
      setMenuOpen(false);
    };
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);

  if (resuming) return <p class="muted loading">Loading…</p>;
  if (!who) return <LoginPage />;
  const views = viewsFor(who);
  // A section's own query (#/sessions?status=completed) is the page's to read.
  const [head, ...rest] = (route.split('?')[0] ?? '').split('/');
  const view = views.find((v) => v.route === head) ?? views[0];
  // An address typed or bookmarked is checked as the navigation is: a section the roles do not open
  // says so, instead of a page whose every call the API refuses.
  const refused = head !== undefined && VIEWS.some((v) => v.route === head) && !views.some((v) => v.route === head);
  const page = refused ? (
    <NotAllowed route={head} />
  ) : rest[0] && head && DETAIL_PAGES.has(head) ? (
    DETAIL_PAGES.get(head)?.(decodeURIComponent(rest.join('/')))
  ) : (
    (view?.page() ?? <p class="muted">This client holds no role that opens a section of the console.</p>)
  );

  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <h1>svc console</h1>
        <button
          type="button"
          class="secondary menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="sections"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <Who who={who} />
        <button type="button" class="secondary" onClick={logOut}>
          Log out
        </button>
      </header>
      <div class="layout">
        <Navigation views={views} current={view} open={menuOpen} />
        <main id="main" tabIndex={-1}>
          {page}
        </main>
      </div>
    </>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);
