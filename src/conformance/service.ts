// The conformance report of a tenant, and the haip-1.0 profile's checks over what is created or
// changed in it. Both read the tenant's live configuration through the features that own it.
import type { CredentialConfigService } from '../credential-configs/service.js';
import { HAIP_PROFILE } from '../issuance/settings/profile.js';
import type { IssuerSettings, IssuerSettingsService } from '../issuance/settings/service.js';
import type { KeyChainService } from '../key-chains/service.js';
import type { Executor } from '../platform/db/values.js';
import type { FieldError } from '../platform/http/problem.js';
import type { PresentationConfigService } from '../presentation-configs/service.js';
import type { PresentationOffers } from '../verification/presentation-request/service.js';
import { HAIP_REQUIREMENTS, type Status, type TenantFacts } from './requirements.js';
import {
  type ChainFacts,
  type CredentialConfigFacts,
  credentialConfigViolations,
  defaultChainViolations,
  leafIsSelfSigned,
  presentationRequestViolations,
  requestSignerViolations,
  settingsViolations,
} from './rules.js';

export interface ConformanceNeeds {
  issuerSettings: IssuerSettingsService;
  credentialConfigs: CredentialConfigService;
  presentationConfigs: PresentationConfigService;
  presentationOffers: PresentationOffers;
  keyChains: KeyChainService;
  /** PEM trust anchors of the wallet providers the tenant trusts: its settings' and its trust lists' (TrustService.walletProviders). */
  walletProviders: (tenantId: string, settings: IssuerSettings) => Promise<string[]>;
}

export interface ConformanceReport {
  profile: typeof HAIP_PROFILE;
  tenantId: string;
  requirements: { id: string; section: string; role: 'issuer' | 'verifier'; requirement: string; status: Status; detail: string }[];
}

/** A credential configuration's document as the profile rules read it, with the key chains it is signed with. */
type CredentialDoc = CredentialConfigFacts & { keyChainId: string | null; statusListSigner: string };

export class ConformanceService {
  constructor(private readonly needs: ConformanceNeeds) {}

  /** Makes the tenants in profile haip-1.0 refuse what breaks it. Called once, when the service is assembled. */
  enforce() {
    const { issuerSettings, credentialConfigs, presentationConfigs, presentationOffers } = this.needs;
    const inProfile = async (tenantId: string, db?: Executor) => (await issuerSettings.get(tenantId, db)).profile === HAIP_PROFILE;
    issuerSettings.addCheck(async (tenantId, settings, db) =>
      settings.profile === HAIP_PROFILE ? [...settingsViolations(settings), ...(await this.existingViolations(tenantId, db))] : [],
    );
    credentialConfigs.addCheck(async (tenantId, doc, db) =>
      (await inProfile(tenantId, db)) ? this.credentialViolations(tenantId, doc, db) : [],
    );
    presentationConfigs.addCheck(async (tenantId, settings, db) =>
      (await inProfile(tenantId, db)) ? this.requestSignerViolations(tenantId, settings.accessKeyChainId, 'body.accessKeyChainId', db) : [],
    );
    this.needs.keyChains.onChangeCheck(async (tenantId, chain, field, db) =>
      (await inProfile(tenantId, db)) ? defaultChainViolations(chain, field) : [],
    );
    presentationOffers.addCheck(async (tenantId, input, config) => {
      if (!(await inProfile(tenantId))) return [];
      const signer = await this.requestSignerViolations(tenantId, config.accessKeyChainId, 'body.requestId');
      return [...presentationRequestViolations(input), ...signer];
    });
  }

  async report(tenantId: string, profile: typeof HAIP_PROFILE): Promise<ConformanceReport> {
    const facts = await this.facts(tenantId);
    const requirements = HAIP_REQUIREMENTS.map(({ judge, ...requirement }) => ({ ...requirement, ...judge(facts) }));
    return { profile, tenantId, requirements };
  }

  private async facts(tenantId: string): Promise<TenantFacts> {
    const { issuerSettings, credentialConfigs, presentationConfigs, keyChains, walletProviders } = this.needs;
    const [settings, configs, presentations, chains] = await Promise.all([
      issuerSettings.get(tenantId),
      credentialConfigs.list(tenantId),
      presentationConfigs.list(tenantId),
      keyChains.list(tenantId),
    ]);
    const walletAnchors = await walletProviders(tenantId, settings);
    return {
      settings,
      credentialConfigs: configs,
      presentationConfigs: presentations.map((c) => ({ id: c.id, accessKeyChainId: c.accessKeyChainId })),
      keyChains: chains.map((c) => ({
        id: c.id,
        usageType: c.usageType,
        default: c.default,
        algorithm: c.algorithm,
        activeCertificate: c.activeCertificate,
        selfSigned: leafIsSelfSigned(c),
      })),
      walletProviderAnchors: walletAnchors.length,
    };
  }

  private chain(tenantId: string, keyChainId: string | null, usageType: 'attestation' | 'access' | 'statusList', db?: Executor) {
    return this.needs.keyChains.chainInUse(tenantId, { keyChainId, usageType }, db) as Promise<ChainFacts | undefined>;
  }

  private async credentialViolations(tenantId: string, doc: CredentialDoc, db: Executor): Promise<FieldError[]> {
    const signer = await this.chain(tenantId, doc.keyChainId, 'attestation', db);
    const statusListSigner = doc.statusListSigner === 'issuer' ? signer : await this.chain(tenantId, null, 'statusList', db);
    return credentialConfigViolations(doc, { signer, statusListSigner });
  }

  private async requestSignerViolations(tenantId: string, accessKeyChainId: string | null, field: string, db?: Executor) {
    const signer = await this.chain(tenantId, accessKeyChainId, 'access', db);
    return signer ? requestSignerViolations(signer, field) : [];
  }

  /** What the tenant already has that the profile would refuse: switching the profile on is refused while there is any. */
  private async existingViolations(tenantId: string, db: Executor): Promise<FieldError[]> {
    const errors: FieldError[] = [];
    const named = (what: string, error: FieldError) => ({
      field: 'body.profile',
      message: `${what} (${error.field.replace(/^body\./, '')}): ${error.message}`,
    });
    for (const config of await this.needs.credentialConfigs.list(tenantId, db)) {
      for (const error of await this.credentialViolations(tenantId, config, db))
        errors.push(named(`credential configuration '${config.id}'`, error));
    }
    for (const config of await this.needs.presentationConfigs.list(tenantId, db)) {
      for (const error of await this.requestSignerViolations(tenantId, config.accessKeyChainId, 'body.accessKeyChainId', db))
        errors.push(named(`presentation configuration '${config.id}'`, error));
    }
    return errors;
  }
}
