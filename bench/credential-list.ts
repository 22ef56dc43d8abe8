// Requests per second of GET /api/issuer/credentials (a tenant's credential configurations, as an
// integrator's back end or the console reads them) with 10 keep-alive connections, and the service's
// CPU per request. The client is a plain node:http loop (lighter than fetch, so that on a small
// machine it takes less CPU from the service it measures).
// Run: npx tsx bench/credential-list.ts [seconds per measurement, default 10] [configurations, default 10]
//      (DB_TYPE=postgres for PostgreSQL)
import { Agent, request } from 'node:http';
import { json, startServiceProcess } from './support.js';

const seconds = Number(process.argv[2] ?? 10);
const configurations = Number(process.argv[3] ?? 10);
const CONNECTIONS = 10;
const service = await startServiceProcess(40_000 + Math.floor(Math.random() * 1000));

try {
  const tenant = await json(`${service.url}/api/tenant`, {
    method: 'POST',
    token: service.rootToken,
    body: JSON.stringify({ id: 'bench', name: 'Bench', roles: ['issuance:manage', 'issuance:offer'] }),
  });
  const { access_token: token } = await json(`${service.url}/api/oauth2/token`, {
    method: 'POST',
    body: JSON.stringify({ client_id: tenant.client.clientId, client_secret: tenant.client.secret }),
  });
  for (let i = 0; i < configurations; i++) {
    await json(`${service.url}/api/issuer/credentials`, {
      method: 'POST',
      token,
      body: JSON.stringify({
        id: `pid-${i}`,
        config: { format: 'dc+sd-jwt', scope: `pid-${i}` },
        vct: `urn:eudi:pid:${i}`,
        fields: ['given_name', 'family_name', 'birthdate', 'nationality'].map((name) => ({ path: [name], type: 'string' })),
      }),
    });
  }
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const url = new URL(`${service.url}/api/issuer/credentials`);
  const get = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(url, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`GET ${url}: ${res.statusCode}`));
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end();
    });
  /** Requests completed by CONNECTIONS loops in `ms`. */
  const run = async (ms: number) => {
    const until = performance.now() + ms;
    let done = 0;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (performance.now() < until) {
          await get();
          done++;
        }
      }),
    );
    return done;
  };
  console.log(
    `GET /api/issuer/credentials (${configurations} configurations), ${CONNECTIONS} connections, database ${process.env.DB_TYPE ?? 'sqlite'}`,
  );
  await run(2000); // warm-up
  for (let i = 0; i < 3; i++) {
    const cpu = service.cpuMs();
    const started = performance.now();
    const done = await run(seconds * 1000);
    const elapsed = (performance.now() - started) / 1000;
    console.log(
      `${(done / elapsed).toFixed(0)} req/s over ${elapsed.toFixed(1)} s; service CPU ${((service.cpuMs() - cpu) / done).toFixed(3)} ms/request`,
    );
  }
  agent.destroy();
} finally {
  await service.stop();
}
