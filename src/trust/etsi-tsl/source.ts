// Each tenant's EU trusted lists, kept verified in memory: the LOTL its settings name (checked against
// the certificates pinned there), and the national lists the LOTL points to (XML ones, each checked
// against the certificates the LOTL names for it). A verification never fetches: it reads the copy
// kept, and a copy due for refresh (refreshHours, or a list's NextUpdate) is refreshed beside it,
// one refresh per tenant at a time. A list that cannot be fetched or does not verify leaves the last
// good copy of it in use (logged). A list past its NextUpdate still counts for GRACE_MS (a late
// publication must not stop every verification at once); after that its services count no more.
import { X509Certificate } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import type { OutboundClient } from '../../platform/outbound/client.js';
import { MAX_LIST_BYTES, readList, statusAt, TRUSTED_STATUSES, type TrustedList, TrustedListRefused, verifiedList } from './reader.js';
import type { EtsiPurpose, EtsiTrustedListsSettings } from './settings.js';

/** How long a list past its NextUpdate still counts. */
export const GRACE_MS = 24 * 3_600_000;
/** The EU LOTL points to about 30 national lists. */
const MAX_LISTS = 64;
/** A whole refresh (the LOTL and every national list) ends within this. */
const REFRESH_DEADLINE_MS = 120_000;
const REQUEST_TIMEOUT_MS = 30_000;
/** After a failed refresh the next is tried this much later, not at each verification. */
const RETRY_MS = 5 * 60_000;

export interface EtsiLog {
  warn(details: Record<string, unknown>, message: string): void;
}

interface KeptList {
  url: string;
  list: TrustedList;
  fetchedAt: Date;
  /** Each service certificate's PEM (undefined: not a certificate), read once per copy, not at each question. */
  pems: Map<string, string | undefined>;
}

interface TenantLists {
  /** The settings these lists were read under (changed settings: read again). */
  settingsKey: string;
  /** The last good copy of each list, by URL; the LOTL first. */
  lists: Map<string, KeptList>;
  refreshAt: number;
  refreshing?: Promise<void>;
}

export interface EtsiTrustedListsNeeds {
  outbound: OutboundClient;
  settingsOf(tenantId: string): Promise<EtsiTrustedListsSettings | null>;
  clock: Clock;
  log: EtsiLog;
}

const pemOf = (der: string): string | undefined => {
  try {
    return new X509Certificate(Buffer.from(der, 'base64')).toString().trim();
  } catch {
    return undefined;
  }
};

export class EtsiTrustedLists {
  private readonly tenants = new Map<string, TenantLists>();

  constructor(private readonly needs: EtsiTrustedListsNeeds) {}

  /**
   * The PEM certificates of the tenant's trusted services counted for `purpose` (its settings'
   * service types, current status granted or recognised at the time asked); none without settings.
   */
  async certificates(tenantId: string, purpose: EtsiPurpose): Promise<string[]> {
    const settings = await this.needs.settingsOf(tenantId);
    if (!settings) return [];
    const kept = await this.kept(tenantId, settings);
    const types = new Set(settings.purposes[purpose]);
    return this.trustedCertificates([...kept.lists.values()], (type) => types.has(type));
  }

  /** The certificates of every trusted service of the verified list at `url` held for some tenant; undefined when none holds it. */
  verifiedCertificates(url: string): string[] | undefined {
    for (const tenant of this.tenants.values()) {
      const kept = tenant.lists.get(url);
      if (kept) return this.trustedCertificates([kept], () => true);
    }
    return undefined;
  }

  /** The verified lists kept for the tenant (for the management API and tests): URL, territory, sequence number, NextUpdate. */
  summary(tenantId: string) {
    return [...(this.tenants.get(tenantId)?.lists.values() ?? [])].map(({ url, list, fetchedAt }) => ({
      url,
      territory: list.territory,
      sequenceNumber: list.sequenceNumber,
      nextUpdate: list.nextUpdate,
      fetchedAt,
    }));
  }

  /** Fetches the tenant's lists again now (a failure keeps the last good copies, as a scheduled refresh does). */
  async refreshNow(tenantId: string): Promise<void> {
    const settings = await this.needs.settingsOf(tenantId);
    if (!settings) return;
    const tenant = await this.kept(tenantId, settings);
    await this.refresh(tenantId, tenant, settings);
  }

  /** The tenant's settings changed: its lists are read again at the next question. */
  forget(tenantId: string) {
    this.tenants.delete(tenantId);
  }

  private trustedCertificates(lists: KeptList[], counts: (type: string) => boolean): string[] {
    const now = this.needs.clock.now();
    const pems = new Set<string>();
    for (const { list, pems: pemsOf } of lists) {
      if (list.nextUpdate && list.nextUpdate.getTime() + GRACE_MS < now.getTime()) continue;
      for (const service of list.services) {
        const status = statusAt(service, now);
        if (!counts(service.type) || !status || !TRUSTED_STATUSES.has(status)) continue;
        for (const der of service.certificates) {
          if (!pemsOf.has(der)) pemsOf.set(der, pemOf(der));
          const pem = pemsOf.get(der);
          if (pem) pems.add(pem);
        }
      }
    }
    return [...pems];
  }

  /** The tenant's kept lists: read first when there are none, refreshed beside the answer when due. */
  private async kept(tenantId: string, settings: EtsiTrustedListsSettings): Promise<TenantLists> {
    const settingsKey = JSON.stringify(settings);
    let tenant = this.tenants.get(tenantId);
    if (!tenant || tenant.settingsKey !== settingsKey) {
      tenant = { settingsKey, lists: new Map(), refreshAt: 0 };
      this.tenants.set(tenantId, tenant);
    }
    if (Date.now() >= tenant.refreshAt) {
      const refresh = this.refresh(tenantId, tenant, settings);
      // The first read waits for its lists; later ones answer from the last good copy.
      if (tenant.lists.size === 0) await refresh;
    }
    return tenant;
  }

  /** One refresh per tenant at a time: callers that arrive during it share it. */
  private refresh(tenantId: string, tenant: TenantLists, settings: EtsiTrustedListsSettings): Promise<void> {
    if (!tenant.refreshing) {
      tenant.refreshing = this.fetchAll(tenantId, tenant, settings).finally(() => {
        tenant.refreshing = undefined;
      });
    }
    return tenant.refreshing;
  }

  private async fetchAll(tenantId: string, tenant: TenantLists, settings: EtsiTrustedListsSettings): Promise<void> {
    const deadline = AbortSignal.timeout(REFRESH_DEADLINE_MS);
    const started = Date.now();
    let lotl: TrustedList;
    try {
      lotl = await this.fetchList(settings.lotlUrl, settings.signerCertificates, tenant, deadline);
    } catch (err) {
      tenant.refreshAt = started + RETRY_MS;
      this.needs.log.warn(
        { tenantId, url: settings.lotlUrl, err: String(err), kept: tenant.lists.has(settings.lotlUrl) },
        'EU trusted lists: the LOTL was not refreshed; the last good copy (if any) stays in use',
      );
      return;
    }
    const pointers = lotl.pointers
      .filter((pointer) => pointer.location !== settings.lotlUrl && /xml/i.test(pointer.mimeType ?? ''))
      .slice(0, MAX_LISTS);
    let failed = false;
    await Promise.all(
      pointers.map(async (pointer) => {
        try {
          await this.fetchList(pointer.location, pointer.signers, tenant, deadline);
        } catch (err) {
          failed = true;
          this.needs.log.warn(
            { tenantId, url: pointer.location, territory: pointer.territory, err: String(err), kept: tenant.lists.has(pointer.location) },
            'EU trusted lists: a national list was not refreshed; the last good copy (if any) stays in use',
          );
        }
      }),
    );
    // Lists the LOTL no longer points to stop counting.
    const pointed = new Set([settings.lotlUrl, ...pointers.map((pointer) => pointer.location)]);
    for (const url of tenant.lists.keys()) if (!pointed.has(url)) tenant.lists.delete(url);
    const nextUpdates = [...tenant.lists.values()].flatMap(({ list }) => (list.nextUpdate ? [list.nextUpdate.getTime()] : []));
    const now = this.needs.clock.now().getTime();
    const dueBy = Math.min(settings.refreshHours * 3_600_000, ...nextUpdates.map((at) => Math.max(at - now, RETRY_MS)));
    tenant.refreshAt = started + (failed ? Math.min(dueBy, RETRY_MS) : dueBy);
  }

  /** Fetches, verifies and reads one list, and keeps it; a refused one leaves the kept copy as it was. */
  private async fetchList(url: string, signers: readonly string[], tenant: TenantLists, signal: AbortSignal): Promise<TrustedList> {
    const reply = await this.needs.outbound.request(url, { maxBytes: MAX_LIST_BYTES, timeoutMs: REQUEST_TIMEOUT_MS, signal });
    if (!reply.ok) throw new TrustedListRefused(`it answered HTTP ${reply.status}`);
    const list = readList(verifiedList(reply.body.toString('utf8'), signers));
    const before = tenant.lists.get(url);
    // An older list, even validly signed, cannot take back what a newer one said (a replayed list).
    if (before && list.sequenceNumber < before.list.sequenceNumber)
      throw new TrustedListRefused(
        `its TSLSequenceNumber ${list.sequenceNumber} is older than the one kept (${before.list.sequenceNumber})`,
      );
    tenant.lists.set(url, { url, list, fetchedAt: this.needs.clock.now(), pems: new Map() });
    return list;
  }
}
