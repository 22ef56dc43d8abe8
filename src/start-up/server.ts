// start(): configuration, first-run secrets, the assembled app, listening. main.ts and the tests
// both start the service through here.
import { createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { type BuildOptions, buildApp, type Services } from '../app.js';
import { type AddressedConfig, type Config, loadConfig, type ReadyConfig } from '../config.js';
import { ConfigImportError, type ImportEnvironment, importEnvironment } from '../config-files/service.js';
import type { Db } from '../platform/db/connect.js';
import { type DrainOutcome, drain, trackConnections } from '../platform/lifecycle/drain.js';
import { databaseFailure, listenFailure, StartUpError } from '../platform/lifecycle/start-up-errors.js';
import { explainMasterSecretRefusal, firstRunAnnouncement, prepareSecrets } from './first-run.js';

export interface RunningService {
  app: FastifyInstance;
  db: Db;
  services: Services;
  config: ReadyConfig;
  /** The address the server listens on, for example http://127.0.0.1:3000. */
  url: string;
  /**
   * Closes without a drain (tests, and a start that failed half-way): the server (its requests in
   * flight finish), then every shutdown step, with no deadline.
   */
  close(): Promise<void>;
  /** The stop of a SIGTERM or SIGINT: drains within SHUTDOWN_GRACE_SECONDS (src/platform/lifecycle/drain.ts). */
  drain(): Promise<DrainOutcome>;
}

export async function start(
  env: Record<string, string | undefined>,
  announce: (text: string) => void = (t) => process.stdout.write(t),
  options: BuildOptions = {},
): Promise<RunningService> {
  const { config: withSecrets, generated } = prepareSecrets(loadConfig(env));
  const addressed = await settleAddresses(withSecrets);
  // The configuration comes back with MASTER_SECRET set: a master key source's data key is opened with the database.
  const { app, db, services, config } = await buildApp(addressed, { ...options, env }).catch((err) => {
    const failure = explainMasterSecretRefusal(addressed, generated, databaseFailure(addressed, err));
    // The metrics port is opened while the app is built.
    throw failure === err && addressed.METRICS_PORT ? listenFailure({ HOST: addressed.HOST, PORT: addressed.METRICS_PORT }, err) : failure;
  });
  if (config.CONFIG_IMPORT) {
    await importConfiguration(app, services, config.CONFIG_IMPORT, importEnvironment(env, config.CONFIG_IMPORT_ENV_ALLOW));
  }
  const clientUnused = generated.client !== undefined && !(await services.clients.hasObtainedToken(generated.client.id));
  const announcement = firstRunAnnouncement(config, generated, clientUnused);
  const connections = trackConnections(app.server);
  try {
    await app.listen({ port: config.PORT, host: config.HOST });
  } catch (err) {
    await app.close();
    throw listenFailure(config, err);
  }
  const mismatch = publicUrlMismatch(config);
  if (mismatch) app.log.warn(mismatch);
  if (announcement) {
    app.log.info({ firstRun: announcement.record }, 'generated secrets in use: the terminal shows how to get a first token');
    announce(announcement.text);
  }
  return {
    app,
    db,
    services,
    config,
    url: `http://127.0.0.1:${config.PORT}`,
    close: () => app.close(),
    drain: () =>
      drain(app, services.lifecycle, connections, {
        delaySeconds: config.SHUTDOWN_DELAY_SECONDS,
        graceSeconds: config.SHUTDOWN_GRACE_SECONDS,
      }),
  };
}

/** The configuration files of CONFIG_IMPORT, written before the service answers anyone. */
async function importConfiguration(app: FastifyInstance, services: Services, dir: string, env: ImportEnvironment) {
  try {
    const summary = await services.configFiles.importFolder(dir, env);
    app.log.info({ configImport: { dir, ...summary } }, 'configuration files imported');
  } catch (err) {
    await app.close();
    if (err instanceof ConfigImportError) throw new StartUpError('configImport', `CONFIG_IMPORT ${dir}: ${err.message}`);
    throw err;
  }
}

/**
 * The port (a free one for PORT=0) is fixed before the app is built, so that a PUBLIC_URL left unset can name the very address listened on:
 * issuer identifiers, offer URIs and certificates are made from it.
 */
async function settleAddresses(config: Config): Promise<AddressedConfig> {
  const port = config.PORT === 0 ? await freePort(config.HOST) : config.PORT;
  const publicUrl = config.PUBLIC_URL ?? `http://${urlHost(config.HOST)}:${port}`;
  return { ...config, PORT: port, PUBLIC_URL: publicUrl };
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);
const ANY = new Set(['0.0.0.0', '::']);

/** localhost for the loopback and wildcard interfaces (a name that certificates and browsers accept). */
function urlHost(host: string): string {
  if (LOOPBACK.has(host) || ANY.has(host)) return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * A PUBLIC_URL that names another port, or a remote name while only loopback is listened on, points
 * wallets at an address where this process is not. Behind a reverse proxy (TRUST_PROXY) a
 * difference is expected, so nothing is said.
 */
export function publicUrlMismatch(config: ReadyConfig & Pick<Config, 'TRUST_PROXY'>): string | undefined {
  if (config.TRUST_PROXY) return undefined;
  const url = new URL(config.PUBLIC_URL);
  const publicPort = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const publicHost = url.hostname.replace(/^\[|\]$/g, '');
  const hostDiffers = LOOPBACK.has(config.HOST) ? !LOOPBACK.has(publicHost) : !ANY.has(config.HOST) && publicHost !== config.HOST;
  if (publicPort === config.PORT && !hostDiffers) return undefined;
  return `PUBLIC_URL ${config.PUBLIC_URL} differs from the address listened on (${urlHost(config.HOST)}:${config.PORT}); wallets and browsers will be sent to PUBLIC_URL (fine behind a reverse proxy: set TRUST_PROXY=true)`;
}

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', (err) => reject(listenFailure({ HOST: host, PORT: 0 }, err)));
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
