// A tenant's configuration in the import layout, file path -> content, without secrets: where a
// secret belongs (client secrets, header values, imported private keys) the file names an
// environment variable instead, and the export lists those variables. Importing the files with the
// variables set gives the same configuration (generated keys are made anew).
import type { HttpEndpoint } from '../http-endpoints/schemas.js';
import type { KeyChain } from '../key-chains/model.js';
import type { RequestContext } from '../platform/auth/principal.js';
import type { PresentationConfiguration } from '../presentation-configs/service.js';
import { IMPORT_ENV_PREFIX } from './environment.js';
import type { ConfigServices } from './import.js';
import { KINDS } from './layout.js';

export interface ConfigExport {
  /** Paths relative to the import folder: `acme/tenant.json`, `acme/clients/acme-admin.json`, ... */
  files: Record<string, Record<string, unknown>>;
  /** The environment variables the files refer to, which must be set before they are imported. */
  environment: string[];
}

/** Leaves out what is unset: a file says only what differs from the defaults of its request. */
const compact = (object: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(object).filter(([, value]) => value !== null && value !== undefined));

export class ConfigExporter {
  constructor(private readonly services: ConfigServices) {}

  async export(tenantId: string): Promise<ConfigExport> {
    const s = this.services;
    const tenant = await s.tenants.get(tenantId);
    const environment: string[] = [];
    /** An environment variable named after what it holds, with the prefix the import reads: SVC_IMPORT_ACME_CLIENT_APP_SECRET. */
    const secret = (...parts: string[]) => {
      const env = `${IMPORT_ENV_PREFIX}${[tenantId, ...parts]
        .join('_')
        .toUpperCase()
        .replace(/[^A-Z0-9]+/g, '_')}`;
      environment.push(env);
      return { env };
    };
    const ctx: RequestContext = { principal: { clientId: 'system:config-export', tenantId, roles: [] }, requestId: 'config-export' };
    const files: ConfigExport['files'] = {};
    const put = (path: string, content: Record<string, unknown>) => {
      files[`${tenantId}/${path}`] = content;
    };
    const { name, description, sessionConfig, statusListConfig } = tenant;
    put(KINDS.tenant.path, compact({ id: tenantId, name, description, sessionConfig, statusListConfig }));
    for (const chain of await s.keyChains.list(tenantId)) {
      put(
        `${KINDS.keyChains.path}/${chain.id}.json`,
        keyChainFile(chain, () => secret('key', chain.id, 'private_jwk')),
      );
    }
    for (const client of await s.clients.list(ctx)) {
      const { clientId, roles, description, allowedPresentationConfigs, allowedIssuanceConfigs } = client;
      put(
        `${KINDS.clients.path}/${clientId}.json`,
        compact({
          clientId,
          secret: secret('client', clientId, 'secret'),
          roles,
          description,
          allowedPresentationConfigs,
          allowedIssuanceConfigs,
        }),
      );
    }
    const { federation, etsiTrustedLists, ...issuerSettings } = await s.issuerSettings.get(tenantId);
    put(KINDS.issuer.path, issuerSettings);
    put(KINDS.trust.path, { federation, etsiTrustedLists });
    for (const [key, kind] of [
      ['attributeProviders', 'attribute_provider'],
      ['webhookEndpoints', 'webhook'],
    ] as const) {
      for (const endpoint of await s[key].list(tenantId)) {
        put(
          `${KINDS[key].path}/${endpoint.id}.json`,
          endpointFile(endpoint, () => secret(kind, endpoint.id, 'header')),
        );
      }
    }
    for (const config of await s.credentialConfigs.list(tenantId)) {
      const { tenantId: _t, createdAt: _c, updatedAt: _u, ...file } = config;
      put(`${KINDS.credentialConfigs.path}/${config.id}.json`, compact(file));
    }
    for (const config of await s.presentationConfigs.list(tenantId)) {
      put(
        `${KINDS.presentationConfigs.path}/${config.id}.json`,
        presentationConfigFile(config, () => secret('presentation', config.id, 'webhook_header')),
      );
    }
    for (const list of await s.trustLists.list(tenantId)) {
      put(`${KINDS.trustLists.path}/${list.id}.json`, compact(await s.trustLists.export(tenantId, list.id)));
    }
    return { files, environment };
  }
}

/** A generated chain as the request that generates one like it; an imported one as its import, the key from the environment. */
function keyChainFile(chain: KeyChain, privateKey: () => { env: string }) {
  const settings = {
    description: chain.description,
    rotationEnabled: chain.rotationEnabled,
    rotationIntervalDays: chain.rotationIntervalDays,
    certValidityDays: chain.certValidityDays,
    default: chain.default || undefined,
  };
  if (chain.type === 'imported') {
    const certificateChain = [chain.activeCertificate, chain.rootCertificate].filter(Boolean).join('\n');
    return compact({ id: chain.id, usageType: chain.usageType, privateJwk: privateKey(), certificateChain, ...settings });
  }
  const external = chain.kmsProvider === 'db' ? {} : { kmsProvider: chain.kmsProvider, externalKeyId: chain.externalKeyId };
  return compact({
    id: chain.id,
    usageType: chain.usageType,
    type: chain.type,
    algorithm: chain.algorithm,
    subject: chain.subject,
    ...external,
    ...settings,
  });
}

function endpointFile(endpoint: HttpEndpoint, headerValue: () => { env: string }) {
  const auth =
    endpoint.auth.type === 'header' ? { type: 'header', header: { name: endpoint.auth.header.name, value: headerValue() } } : endpoint.auth;
  return compact({ id: endpoint.id, name: endpoint.name, description: endpoint.description, url: endpoint.url, auth });
}

function presentationConfigFile(config: PresentationConfiguration, headerValue: () => { env: string }) {
  const { tenantId: _t, createdAt: _c, updatedAt: _u, registrationCertCache: _r, webhook, ...file } = config;
  const auth =
    webhook?.auth.type === 'header' ? { type: 'header', header: { name: webhook.auth.header.name, value: headerValue() } } : webhook?.auth;
  return compact({ ...file, webhook: webhook && { url: webhook.url, auth } });
}

/** Where the tar export lists the environment variables, beside the tenant's files (the import reads no .txt file). */
export const ENVIRONMENT_FILE = 'environment.txt';

/**
 * The export as the folder CONFIG_IMPORT reads, path -> text: each file as JSON, and
 * `<tenant>/environment.txt` naming (never giving the values of) the variables to set before importing.
 */
export function exportFolder(tenantId: string, exported: ConfigExport): Map<string, string> {
  const folder = new Map<string, string>();
  for (const [path, content] of Object.entries(exported.files)) folder.set(path, `${JSON.stringify(content, null, 2)}\n`);
  const lines = [
    `# The environment variables the files of tenant ${tenantId} refer to ({"env": "NAME"}).`,
    '# Set each (client secrets, header values, private keys) before starting the service with CONFIG_IMPORT.',
    ...exported.environment,
  ];
  folder.set(`${tenantId}/${ENVIRONMENT_FILE}`, `${lines.join('\n')}\n`);
  return folder;
}
