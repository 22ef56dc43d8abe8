// Login. Integrated mode: a client id and secret. External mode: the identity provider's login (the
// authorization code flow with PKCE of the console's public client). Either way the token stays in
// this page's memory only.
import { useEffect, useState } from 'preact/hooks';
import { type FrontendAuth, finishProviderLogin, frontendAuth, logIn, type Problem, startProviderLogin } from '../api.js';
import { ProblemView } from '../components.js';

export function LoginPage() {
  const [auth, setAuth] = useState<FrontendAuth>();
  const [problem, setProblem] = useState<Problem>();
  useEffect(() => {
    void frontendAuth().then(async (found) => {
      setProblem(await finishProviderLogin(found));
      setAuth(found);
    });
  }, []);
  return (
    <main>
      <section class="card login">
        <h1>Log in to svc</h1>
        {auth?.mode === 'external' && (
          <>
            <ProblemView problem={problem} />
            <button type="button" onClick={() => startProviderLogin(auth)}>
              Log in with the identity provider
            </button>
            <p class="muted">{auth.issuer}</p>
          </>
        )}
        {auth?.mode === 'integrated' && <ClientLogin />}
      </section>
    </main>
  );
}

function ClientLogin() {
  const [clientId, setClientId] = useState('');
  const [secret, setSecret] = useState('');
  const [problem, setProblem] = useState<Problem>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setProblem(await logIn(clientId, secret));
    setBusy(false);
  };
  return (
    <form onSubmit={submit}>
      <label>
        Client id
        <input
          name="client_id"
          autocomplete="username"
          required
          value={clientId}
          onInput={(e) => setClientId((e.target as HTMLInputElement).value)}
        />
      </label>
      <label>
        Client secret
        <input
          name="client_secret"
          type="password"
          autocomplete="current-password"
          required
          value={secret}
          onInput={(e) => setSecret((e.target as HTMLInputElement).value)}
        />
      </label>
      <ProblemView problem={problem} />
      <button type="submit" disabled={busy}>
        Log in
      </button>
      <p class="muted">The first start of the service wrote the bootstrap client to data/bootstrap-client.json.</p>
    </form>
  );
}
