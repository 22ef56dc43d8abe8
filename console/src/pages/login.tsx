// Login with a client id and secret (integrated mode): the token stays in this page's memory only.
import { useState } from 'preact/hooks';
import { logIn, type Problem } from '../api.js';
import { ProblemView } from '../components.js';

export function LoginPage() {
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
    <main>
      <section class="card login">
        <h2>Log in to svc</h2>
        <form onSubmit={submit}>
          <label>
            Client id
            <input name="client_id" autocomplete="username" required value={clientId} onInput={(e) => setClientId((e.target as HTMLInputElement).value)} />
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
        </form>
        <p class="muted">The first start of the service wrote the bootstrap client to data/bootstrap-client.json.</p>
      </section>
    </main>
  );
}
