// The svc console: a single page on the management API, with hash routes (#/tenants, #/sessions/{id})
// so the service serves one document for every view.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { logOut, onSessionChange, type Session, session } from './api.js';
import { LoginPage } from './pages/login.js';
import { OffersPage } from './pages/offers.js';
import { PresentationsPage } from './pages/presentations.js';
import { type ResourceDefinition, ResourcePage } from './pages/resource.js';
import * as resources from './pages/resources.js';
import { SessionPage, SessionsPage } from './pages/sessions.js';
import { AuditPage, SettingsPage } from './pages/settings.js';

interface View {
  route: string;
  label: string;
  /** Shown to a client of a tenant, or to the service's own clients (tenants:manage). */
  for: 'tenant' | 'service';
  page: () => preact.JSX.Element;
}

const resource = (definition: ResourceDefinition) => () => <ResourcePage key={definition.path} definition={definition} />;

const VIEWS: View[] = [
  { route: 'tenants', label: 'Tenants', for: 'service', page: resource(resources.tenants) },
  { route: 'service-clients', label: 'Clients', for: 'service', page: resource(resources.clients) },
  { route: 'offers', label: 'Issue', for: 'tenant', page: () => <OffersPage /> },
  { route: 'presentations', label: 'Verify', for: 'tenant', page: () => <PresentationsPage /> },
  { route: 'sessions', label: 'Sessions', for: 'tenant', page: () => <SessionsPage /> },
  { route: 'credential-configs', label: 'Credential configurations', for: 'tenant', page: resource(resources.credentialConfigs) },
  { route: 'presentation-configs', label: 'Presentation configurations', for: 'tenant', page: resource(resources.presentationConfigs) },
  { route: 'key-chains', label: 'Key chains', for: 'tenant', page: resource(resources.keyChains) },
  { route: 'trust-lists', label: 'Trust lists', for: 'tenant', page: resource(resources.trustLists) },
  { route: 'status-lists', label: 'Status lists', for: 'tenant', page: resource(resources.statusLists) },
  { route: 'attribute-providers', label: 'Attribute providers', for: 'tenant', page: resource(resources.attributeProviders) },
  { route: 'webhook-endpoints', label: 'Webhook endpoints', for: 'tenant', page: resource(resources.webhookEndpoints) },
  { route: 'clients', label: 'Clients', for: 'tenant', page: resource(resources.clients) },
  { route: 'users', label: 'Users', for: 'tenant', page: resource(resources.users) },
  {
    route: 'issuer-settings',
    label: 'Issuer settings',
    for: 'tenant',
    page: () => <SettingsPage title="Issuer settings" path="/api/issuer/config" />,
  },
  {
    route: 'status-list-config',
    label: 'Status list settings',
    for: 'tenant',
    page: () => <SettingsPage title="Status list settings" path="/api/status-list-config" resettable />,
  },
  {
    route: 'session-config',
    label: 'Session retention',
    for: 'tenant',
    page: () => <SettingsPage title="Session retention" path="/api/session-config" resettable />,
  },
  { route: 'audit', label: 'Audit log', for: 'tenant', page: () => <AuditPage /> },
];

const currentRoute = () => location.hash.replace(/^#\/?/, '');

function App() {
  const [who, setWho] = useState<Session | undefined>(session());
  const [route, setRoute] = useState(currentRoute());
  useEffect(() => onSessionChange(() => setWho(session())), []);
  useEffect(() => {
    const onHash = () => setRoute(currentRoute());
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);

  if (!who) return <LoginPage />;
  const views = VIEWS.filter((v) => v.for === (who.tenantId ? 'tenant' : 'service'));
  const [head, ...rest] = route.split('/');
  const view = views.find((v) => v.route === head) ?? views[0];
  const page = head === 'sessions' && rest[0] ? <SessionPage id={decodeURIComponent(rest.join('/'))} /> : view?.page();

  return (
    <>
      <header>
        <h1>svc console</h1>
        <span class="who">
          {who.clientId}
          {who.tenantId ? ` · tenant ${who.tenantId}` : ' · service'}
        </span>
        <button type="button" class="secondary" onClick={logOut}>
          Log out
        </button>
      </header>
      <div class="layout">
        <nav aria-label="sections">
          {views.map((v) => (
            <a key={v.route} href={`#/${v.route}`} aria-current={v === view ? 'page' : undefined}>
              {v.label}
            </a>
          ))}
        </nav>
        <main>{page}</main>
      </div>
    </>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);
