// start(): configuration, first-run secrets, the assembled app, listening. main.ts and the tests
// both start the service through here.
import type { FastifyInstance } from 'fastify';
import { buildApp, type Services } from './app.js';
import { loadConfig, type ReadyConfig } from './config.js';
import { firstRunAnnouncement, prepareSecrets } from './first-run.js';
import type { Db } from './platform/db/connect.js';

export interface RunningService {
  app: FastifyInstance;
  db: Db;
  services: Services;
  config: ReadyConfig;
  /** The address the server listens on, for example http://127.0.0.1:3000. */
  url: string;
  close(): Promise<void>;
}

export async function start(
  env: Record<string, string | undefined>,
  announce: (text: string) => void = (t) => process.stdout.write(t),
): Promise<RunningService> {
  const { config, created } = prepareSecrets(loadConfig(env));
  const { app, db, services } = await buildApp(config);
  await app.listen({ port: config.PORT, host: config.HOST });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const message = firstRunAnnouncement(config, created);
  if (message) announce(message);
  return { app, db, services, config, url: `http://127.0.0.1:${port}`, close: () => app.close() };
}
