// The Kubernetes manifests of deploy/kubernetes: each kustomization renders (with the renderer of
// test/support/kustomize.ts, and as kubectl renders it where kubectl has Kustomize v5), every resource
// is valid against the Kubernetes API schemas (kubernetes-models), and the settings that matter agree
// with the service itself: the probes answer on the service started with the ConfigMap's settings,
// the ports are the configured ones, every variable is a key of src/config.ts, and the Secret holds
// the keys production requires.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Deployment, type IDeployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler, type IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { type INetworkPolicy, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { type IPodDisruptionBudget, PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import {
  ConfigMap,
  type IConfigMap,
  type IContainer,
  type IPodSpec,
  type ISecret,
  type IService,
  type IServiceAccount,
  Secret,
  Service,
  ServiceAccount,
} from 'kubernetes-models/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIG_KEYS, ConfigError, loadConfig, SERVICE_SECRET_KEYS } from '../../src/config.js';
import { fieldProblems, hasFieldSchema } from '../support/kubernetes-fields.js';
import { firstDocument, kubectlKustomize, kubectlUnavailable, type Resource, readYamlDocuments, render } from '../support/kustomize.js';
import { freePort, startService } from '../support/service.js';

const REPO = join(import.meta.dirname, '..', '..');
const DEPLOY = join(REPO, 'deploy', 'kubernetes');
const BASE = join(DEPLOY, 'base');
const PGBOUNCER = join(DEPLOY, 'overlays', 'pgbouncer');
const COMPONENTS = ['servicemonitor', 'kms-providers'].map((name) => join(DEPLOY, 'components', name));

/** The validators of kubernetes-models for the kinds the manifests hold, by apiVersion and kind. */
const VALIDATORS = new Map<string, (resource: Resource) => void>([
  ['v1/ServiceAccount', (r) => new ServiceAccount(r as unknown as IServiceAccount).validate()],
  ['v1/ConfigMap', (r) => new ConfigMap(r as unknown as IConfigMap).validate()],
  ['v1/Secret', (r) => new Secret(r as unknown as ISecret).validate()],
  ['v1/Service', (r) => new Service(r as unknown as IService).validate()],
  ['apps/v1/Deployment', (r) => new Deployment(r as unknown as IDeployment).validate()],
  ['autoscaling/v2/HorizontalPodAutoscaler', (r) => new HorizontalPodAutoscaler(r as unknown as IHorizontalPodAutoscaler).validate()],
  ['policy/v1/PodDisruptionBudget', (r) => new PodDisruptionBudget(r as unknown as IPodDisruptionBudget).validate()],
  ['networking.k8s.io/v1/NetworkPolicy', (r) => new NetworkPolicy(r as unknown as INetworkPolicy).validate()],
  ['monitoring.coreos.com/v1/ServiceMonitor', validateServiceMonitor],
]);

// The base with both components, composed as an operator does in a kustomization of their own.
let composed: string;
beforeAll(() => {
  composed = mkdtempSync(join(tmpdir(), 'svc-kustomize-'));
  const lines = [
    'apiVersion: kustomize.config.k8s.io/v1beta1',
    'kind: Kustomization',
    'resources:',
    `  - ${relative(composed, BASE)}`,
    'components:',
    ...COMPONENTS.map((dir) => `  - ${relative(composed, dir)}`),
  ];
  writeFileSync(join(composed, 'kustomization.yaml'), `${lines.join('\n')}\n`);
});
afterAll(() => rmSync(composed, { recursive: true, force: true }));

const KUSTOMIZATIONS: [string, () => string][] = [
  ['base', () => BASE],
  ['overlays/pgbouncer', () => PGBOUNCER],
  ['base with components/servicemonitor and components/kms-providers', () => composed],
];
const unavailable = kubectlUnavailable();

describe.each(KUSTOMIZATIONS)('Kubernetes: %s', (_name, dir) => {
  it('renders, and every resource is valid against the Kubernetes API schemas', () => {
    const resources = render(dir());
    expect(resources.length).toBeGreaterThan(5);
    for (const resource of resources) {
      const validate = VALIDATORS.get(`${resource.apiVersion}/${resource.kind}`);
      expect(validate, `${resource.apiVersion} ${resource.kind} ${resource.metadata.name}`).toBeDefined();
      validate?.(resource);
    }
    // Field names too, which validate() does not check: an unknown one is refused or dropped by the API.
    expect(fieldProblems(resources.filter(hasFieldSchema), REPO)).toEqual([]);
    const names = resources.map((r) => `${r.kind}/${r.metadata.name}`);
    expect(new Set(names).size, 'no two resources of one kind share a name').toBe(names.length);
  });

  it.skipIf(unavailable !== undefined)(`renders as kubectl kustomize does${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
    const rendered = kubectlKustomize(dir());
    expect(byName(rendered)).toEqual(byName(render(dir())));
  });

  it('sets only variables the service declares, none of its secrets in the ConfigMap', () => {
    const resources = render(dir());
    const { config, secretRefs } = environmentOf(resources);
    const declared = new Set(Object.keys(CONFIG_KEYS));
    const names = [...Object.keys(config), ...secretRefs.map((ref) => ref.name)];
    expect(names.filter((name) => !declared.has(name))).toEqual([]);
    expect(Object.keys(config).filter((name) => SERVICE_SECRET_KEYS.has(name))).toEqual([]);
    // Every value the manifests set literally passes the service's own rules (the Secret's come from the example).
    expect(() => loadConfig({ ...config, ...exampleSecretValues(dir()) })).not.toThrow();
  });

  it('references from svc-secrets exactly the keys production requires, and the example Secret holds each', () => {
    const resources = render(dir());
    const { config, secretRefs } = environmentOf(resources);
    const referenced = secretRefs.map((ref) => ref.name);
    // What the service refuses to start without, with the ConfigMap's settings (NODE_ENV=production).
    const required = missingInProduction(config);
    expect(required.sort()).toEqual(['AUTH_CLIENT_ID', 'AUTH_CLIENT_SECRET', 'MASTER_SECRET']);
    // Besides those: where PostgreSQL is (DB_TYPE=postgres) and, behind PgBouncer, the events' own connection.
    const expected = [...required, 'DATABASE_URL', ...(dir() === PGBOUNCER ? ['EVENTS_DATABASE_URL'] : [])];
    expect([...referenced].sort()).toEqual(expected.sort());
    for (const ref of secretRefs) {
      expect(ref, `${ref.name} is read from a key of its own name`).toMatchObject({
        secret: 'svc-secrets',
        key: ref.name,
        optional: false,
      });
    }
    expect(Object.keys(exampleSecretValues(dir())).sort()).toEqual(expected.sort());
  });

  it('runs the service as the image user, read-only, unprivileged, with its ports and timing from the ConfigMap', () => {
    const resources = render(dir());
    const deployment = find(resources, 'Deployment', 'svc');
    const pod = podSpecOf(deployment);
    const container = firstContainer(pod);
    const { config } = environmentOf(resources);

    // The image's `node` user (uid 1000 in the node images), which owns only DATA_DIR.
    expect(dockerfile().user).toBe('node');
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } });
    expect(container.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(pod.automountServiceAccountToken).toBe(false);
    // What the service may write, each an emptyDir: /tmp, and DATA_DIR as the image sets it.
    for (const path of ['/tmp', dockerfile().env.get('DATA_DIR')]) {
      const mount = container.volumeMounts?.find((m) => m.mountPath === path);
      expect(mount, `a volume at ${path}`).toBeDefined();
      expect(pod.volumes?.find((v) => v.name === mount?.name)?.emptyDir).toBeDefined();
    }

    expect(portNamed(container, 'http')).toBe(Number(config.PORT));
    expect(portNamed(container, 'metrics')).toBe(Number(config.METRICS_PORT));
    for (const probe of [container.startupProbe, container.livenessProbe, container.readinessProbe]) {
      expect(probe?.httpGet?.port).toBe('http');
    }
    // Readiness is the check that looks at the database; liveness only asks whether the process answers.
    expect(container.readinessProbe?.httpGet?.path).toBe('/health/ready');
    expect(container.livenessProbe?.httpGet?.path).not.toBe('/health/ready');

    // The kubelet's SIGKILL comes after the service's own drain: delay, then the grace for requests in flight.
    const drain = Number(config.SHUTDOWN_DELAY_SECONDS) + Number(config.SHUTDOWN_GRACE_SECONDS);
    expect(drain).toBeGreaterThan(0);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(drain);

    // Sized from the measured figures (docs/benchmarks.md: idle about 80 MiB, at most 200 MiB under load).
    expect(mebibytes(container.resources?.requests?.memory)).toBeGreaterThanOrEqual(80);
    expect(mebibytes(container.resources?.limits?.memory)).toBeGreaterThanOrEqual(200);
    expect(container.resources?.requests?.cpu).toBeDefined();
    expect(container.image).toMatch(/^[^:]+\/svc:[\w.-]+$/);
  });

  it('puts two replicas behind the Service, keeps one through disruptions, scales on CPU and admits the ports', () => {
    const resources = render(dir());
    const deployment = find(resources, 'Deployment', 'svc');
    const podLabels = (deployment.spec as IDeployment['spec'])?.template.metadata?.labels ?? {};
    const pod = podSpecOf(deployment);
    const selects = (selector: Record<string, string> | undefined) =>
      Object.keys(selector ?? {}).length > 0 && Object.entries(selector ?? {}).every(([k, v]) => podLabels[k] === v);

    expect((deployment.spec as IDeployment['spec'])?.replicas).toBe(2);
    expect(pod.topologySpreadConstraints?.map((c) => c.topologyKey)).toContain('kubernetes.io/hostname');

    const service = find(resources, 'Service', 'svc').spec as IService['spec'];
    expect(selects(service?.selector)).toBe(true);
    const containerPorts = new Set(firstContainer(pod).ports?.map((p) => p.name));
    expect(service?.ports?.map((p) => p.targetPort).every((port) => containerPorts.has(String(port)))).toBe(true);

    const pdb = find(resources, 'PodDisruptionBudget', 'svc').spec as IPodDisruptionBudget['spec'];
    expect(pdb?.minAvailable).toBe(1);
    expect(selects(pdb?.selector?.matchLabels)).toBe(true);

    const hpa = find(resources, 'HorizontalPodAutoscaler', 'svc').spec as IHorizontalPodAutoscaler['spec'];
    expect(hpa?.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'svc' });
    expect(hpa?.minReplicas).toBe(2);
    expect(hpa?.metrics?.map((m) => m.resource?.name)).toEqual(['cpu']);

    const policy = find(resources, 'NetworkPolicy', 'svc').spec as INetworkPolicy['spec'];
    expect(selects(policy?.podSelector?.matchLabels)).toBe(true);
    expect(policy?.ingress?.flatMap((rule) => rule.ports?.map((p) => p.port))).toEqual(['http', 'metrics']);
    // Metrics have no token on their port: only from inside the cluster.
    expect(policy?.ingress?.find((rule) => rule.ports?.some((p) => p.port === 'metrics'))?.from).toEqual([{ namespaceSelector: {} }]);
    const egressPorts = policy?.egress?.flatMap((rule) => rule.ports?.map((p) => p.port)) ?? [];
    for (const port of [53, 5432, 443]) expect(egressPorts).toContain(port);
    const https = policy?.egress?.find((rule) => rule.ports?.some((p) => p.port === 443));
    expect(https?.to?.[0]?.ipBlock).toEqual({ cidr: '0.0.0.0/0', except: ['169.254.0.0/16'] });

    const monitor = resources.find((r) => r.kind === 'ServiceMonitor');
    if (monitor) {
      const spec = monitor.spec as ServiceMonitorSpec;
      expect(spec.selector.matchLabels).toEqual(find(resources, 'Service', 'svc').metadata.labels);
      expect(spec.endpoints.map((e) => e.port)).toEqual(['metrics']);
      expect(service?.ports?.map((p) => p.name)).toContain('metrics');
    }
  });
});

describe('Kubernetes: the service started with the ConfigMap settings', () => {
  it('answers the probes on their paths, and metrics on the metrics port', async () => {
    const resources = render(BASE);
    const { config } = environmentOf(resources);
    const container = firstContainer(podSpecOf(find(resources, 'Deployment', 'svc')));
    const metricsPort = await freePort();
    // As the pod runs it, but on free ports of this machine and the suite's database.
    const { DB_TYPE: _database, PORT: _port, HOST: _host, METRICS_PORT: _metrics, ...settings } = config;
    const svc = await startService({ ...settings, LOG_LEVEL: 'silent', METRICS_PORT: String(metricsPort) });
    try {
      expect(svc.running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      for (const probe of [container.startupProbe, container.livenessProbe, container.readinessProbe]) {
        const reply = await svc.raw('GET', probe?.httpGet?.path ?? '(no path)');
        expect(reply.status, probe?.httpGet?.path).toBe(200);
        expect(reply.body).toMatchObject({ status: 'ok' });
      }
      const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain('svc_http_requests_total');
    } finally {
      await svc.stop();
    }
  });
});

describe('Kubernetes: overlays/pgbouncer', () => {
  it('pools in transaction mode, sends DATABASE_URL through PgBouncer and EVENTS_DATABASE_URL to PostgreSQL', () => {
    const resources = render(PGBOUNCER);
    const ini = parseIni(String((find(resources, 'ConfigMap', 'svc-pgbouncer').data as Record<string, string>)['pgbouncer.ini']));
    expect(ini.get('pgbouncer')?.get('pool_mode')).toBe('transaction');
    // The service's prepared statements (DB_PREPARED_STATEMENTS defaults to true) tracked by PgBouncer.
    expect(Number(ini.get('pgbouncer')?.get('max_prepared_statements'))).toBeGreaterThan(0);
    const upstream = /host=(\S+) port=(\d+)/.exec(ini.get('databases')?.get('*') ?? '');
    const secrets = exampleSecretValues(PGBOUNCER);

    const service = find(resources, 'Service', 'svc-pgbouncer');
    const port = (service.spec as IService['spec'])?.ports?.[0];
    const pooled = new URL(secrets.DATABASE_URL ?? '');
    expect([pooled.hostname, Number(pooled.port)]).toEqual([service.metadata.name, port?.port]);
    expect(Number(ini.get('pgbouncer')?.get('listen_port'))).toBe(port?.port);
    const direct = new URL(secrets.EVENTS_DATABASE_URL ?? '');
    expect([direct.hostname, direct.port]).toEqual([upstream?.[1], upstream?.[2]]);

    // PgBouncer knows the user of the URLs, and svc may reach PgBouncer.
    const userlist = examples(PGBOUNCER).find((s) => s.metadata?.name === 'svc-pgbouncer-auth')?.stringData?.['userlist.txt'];
    expect(userlist).toContain(`"${pooled.username}" "${decodeURIComponent(pooled.password)}"`);
    const pgbouncer = podSpecOf(find(resources, 'Deployment', 'svc-pgbouncer'));
    expect(pgbouncer.volumes?.map((v) => v.secret?.secretName ?? v.configMap?.name)).toEqual(['svc-pgbouncer', 'svc-pgbouncer-auth']);
    const egress = (find(resources, 'NetworkPolicy', 'svc').spec as INetworkPolicy['spec'])?.egress ?? [];
    expect(egress.some((rule) => rule.ports?.some((p) => p.port === port?.port))).toBe(true);
    expect(pgbouncer.securityContext?.runAsNonRoot).toBe(true);
    expect(firstContainer(pgbouncer).securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
  });
});

describe('Kubernetes: components/kms-providers', () => {
  it('points KMS_PROVIDERS at the file the operator Secret svc-kms mounts', () => {
    const pod = podSpecOf(find(render(composed), 'Deployment', 'svc'));
    const container = firstContainer(pod);
    const path = container.env?.find((e) => e.name === 'KMS_PROVIDERS')?.value ?? '';
    const mount = container.volumeMounts?.find((m) => path.startsWith(`${m.mountPath}/`));
    expect(mount?.readOnly).toBe(true);
    expect(pod.volumes?.find((v) => v.name === mount?.name)?.secret?.secretName).toBe('svc-kms');
  });
});

type ServiceMonitorSpec = {
  selector: { matchLabels: Record<string, string> };
  endpoints: { port: string; path?: string; interval?: string }[];
};

/** The Prometheus Operator's CRD is not in kubernetes-models: its shape, as far as the manifest uses it. */
function validateServiceMonitor(resource: Resource) {
  const spec = resource.spec as ServiceMonitorSpec;
  expect(Object.keys(resource).sort()).toEqual(['apiVersion', 'kind', 'metadata', 'spec']);
  expect(Object.keys(spec).sort()).toEqual(['endpoints', 'selector']);
  expect(Object.keys(spec.selector)).toEqual(['matchLabels']);
  for (const endpoint of spec.endpoints) {
    expect(Object.keys(endpoint).every((key) => ['port', 'path', 'interval'].includes(key))).toBe(true);
    expect(endpoint.port).toMatch(/^[a-z][a-z0-9-]*$/);
    expect(endpoint.path ?? '/metrics').toMatch(/^\//);
    expect(endpoint.interval ?? '30s').toMatch(/^\d+(s|m)$/);
  }
}

function byName(resources: Resource[]): Map<string, Resource> {
  return new Map(resources.map((r) => [`${r.kind}/${r.metadata.name}`, r]));
}

function find(resources: Resource[], kind: string, name: string): Resource {
  const resource = resources.find((r) => r.kind === kind && r.metadata.name === name);
  if (!resource) throw new Error(`no ${kind} ${name}`);
  return resource;
}

function podSpecOf(deployment: Resource): IPodSpec {
  const spec = (deployment.spec as IDeployment['spec'])?.template.spec;
  if (!spec) throw new Error(`Deployment ${deployment.metadata.name} has no pod spec`);
  return spec;
}

function firstContainer(pod: IPodSpec): IContainer {
  const [container] = pod.containers;
  if (!container) throw new Error('a pod without containers');
  return container;
}

function portNamed(container: IContainer, name: string): number | undefined {
  return container.ports?.find((p) => p.name === name)?.containerPort;
}

interface SecretRef {
  name: string;
  secret: string;
  key: string;
  optional: boolean;
}

/**
 * The environment of the svc container: the literal values (the ConfigMaps of envFrom, then env's
 * `value`s, which win) and the variables read from Secrets.
 */
function environmentOf(resources: Resource[]): { config: Record<string, string>; secretRefs: SecretRef[] } {
  const container = firstContainer(podSpecOf(find(resources, 'Deployment', 'svc')));
  const config: Record<string, string> = Object.create(null);
  for (const source of container.envFrom ?? []) {
    expect(source.secretRef, 'whole Secrets are not imported: each key is named').toBeUndefined();
    const data = find(resources, 'ConfigMap', source.configMapRef?.name ?? '').data ?? {};
    Object.assign(config, data);
  }
  const secretRefs: SecretRef[] = [];
  for (const variable of container.env ?? []) {
    const ref = variable.valueFrom?.secretKeyRef;
    if (ref) secretRefs.push({ name: variable.name, secret: ref.name ?? '', key: ref.key, optional: ref.optional ?? false });
    else if (variable.value !== undefined) config[variable.name] = variable.value;
    else throw new Error(`${variable.name}: neither a value nor a Secret key`);
  }
  return { config, secretRefs };
}

/** The keys loadConfig says production lacks, given only these settings. */
function missingInProduction(config: Record<string, string>): string[] {
  try {
    loadConfig(config);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.problems.filter((p) => p.endsWith(': required in production')).map((p) => p.slice(0, p.indexOf(':')));
  }
  return [];
}

/** The example Secrets beside a kustomization (secret.example.yaml), never part of it. */
function examples(dir: string): ISecret[] {
  const kustomization = firstDocument(join(dir, 'kustomization.yaml')) as { resources: string[] };
  expect(kustomization.resources, 'the example Secret is not applied with the manifests').not.toContain('secret.example.yaml');
  const secrets = readYamlDocuments(join(dir, 'secret.example.yaml')) as ISecret[];
  for (const secret of secrets) new Secret(secret).validate();
  return secrets;
}

/** svc-secrets of the example beside the kustomization (the composed one uses the base's). */
function exampleSecretValues(dir: string): Record<string, string> {
  const secret = examples(dir === composed ? BASE : dir).find((s) => s.metadata?.name === 'svc-secrets');
  return { ...secret?.stringData };
}

/** The Dockerfile's runtime user and ENV settings (the last stage's). */
function dockerfile(): { user: string | undefined; env: Map<string, string> } {
  const text = readFileSync(join(REPO, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const last = text.split(/^FROM /m).at(-1) ?? '';
  const user = [...last.matchAll(/^USER (\S+)/gm)].at(-1)?.[1];
  const env = new Map<string, string>();
  for (const [, settings = ''] of last.matchAll(/^ENV (.+)$/gm)) {
    for (const [, key = '', value = ''] of settings.matchAll(/(\w+)=(\S+)/g)) env.set(key, value);
  }
  return { user, env };
}

function mebibytes(quantity: string | number | undefined): number {
  const match = /^(\d+)(Mi|Gi)$/.exec(String(quantity));
  if (!match) throw new Error(`memory quantity ${quantity}: expected Mi or Gi`);
  return Number(match[1]) * (match[2] === 'Gi' ? 1024 : 1);
}

/** pgbouncer.ini as sections of settings (`;` comments dropped). */
function parseIni(text: string): Map<string, Map<string, string>> {
  const sections = new Map<string, Map<string, string>>();
  let current = new Map<string, string>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith(';')) continue;
    const section = /^\[(.+)\]$/.exec(line);
    if (section) {
      current = new Map();
      sections.set(section[1] ?? '', current);
    } else {
      const [key = '', ...value] = line.split('=');
      current.set(key.trim(), value.join('=').trim());
    }
  }
  return sections;
}
