// A stand-in for an external registrar (which cannot run here), speaking the protocol that
// ../shared/spec/registrar-api.md documents: its identity provider's token endpoint in Keycloak's
// layout ({oidcUrl}/protocol/openid-connect/token, password grant, public client by client_id in the
// body or confidential by HTTP Basic) and the public schema-metadata catalog. It records what it got.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RegistrarFake {
  url: string;
  /** The identity provider's issuer URL (a Keycloak realm). */
  oidcUrl: string;
  account: { username: string; password: string; clientId: string; clientSecret?: string };
  /** Password grants received, in order. */
  grants: URLSearchParams[];
  /** What GET /schema-metadata answers; a number makes it fail with that status and a message. */
  catalog: unknown[] | number;
  stop(): Promise<void>;
}

const REALM_PATH = '/realms/registrar';

export async function startRegistrarFake(account: RegistrarFake['account']): Promise<RegistrarFake> {
  const fake = { account, grants: [] as URLSearchParams[], catalog: [] as unknown[] | number };
  const server: Server = createServer(async (req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'POST' && req.url === `${REALM_PATH}/protocol/openid-connect/token`) {
      const form = new URLSearchParams(await text(req));
      fake.grants.push(form);
      const basic = req.headers.authorization?.startsWith('Basic ')
        ? Buffer.from(req.headers.authorization.slice(6), 'base64').toString().split(':').map(decodeURIComponent)
        : undefined;
      const clientOk = account.clientSecret
        ? basic?.[0] === account.clientId && basic?.[1] === account.clientSecret
        : form.get('client_id') === account.clientId;
      if (!clientOk) return send(401, { error: 'invalid_client', error_description: 'Invalid client or Invalid client credentials' });
      if (form.get('grant_type') !== 'password') return send(400, { error: 'unsupported_grant_type' });
      if (form.get('username') !== account.username || form.get('password') !== account.password) {
        return send(401, { error: 'invalid_grant', error_description: 'Invalid user credentials' });
      }
      return send(200, { access_token: `registrar-token-${fake.grants.length}`, expires_in: 300, token_type: 'Bearer' });
    }
    if (req.method === 'GET' && req.url === '/schema-metadata') {
      if (typeof fake.catalog === 'number') return send(fake.catalog, { statusCode: fake.catalog, message: 'catalog unavailable' });
      return send(200, fake.catalog);
    }
    send(404, { statusCode: 404, message: `Cannot ${req.method} ${req.url}` });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(fake, {
    url,
    oidcUrl: `${url}${REALM_PATH}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

async function text(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
