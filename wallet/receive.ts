// Redeems a credential offer (OpenID4VCI 1.0, pre-authorized code): resolves the offer and the
// issuer's metadata, asks for the transaction code when the offer has one, binds the access token to
// a DPoP key when the authorization server supports it, requests each offered credential with a
// proof of the holder key, verifies and stores what comes back, and tells the issuer it was accepted.
import { preAuthorizedCodeGrantIdentifier } from '@openid4vc/oauth2';
import { type CredentialOfferObject, type IssuerMetadataResult, Openid4vciClient } from '@openid4vc/openid4vci';
import { issuanceCallbacks } from './callbacks.js';
import { boundTo, personalClaims, viewOf } from './credentials.js';
import { tracingFetch } from './http.js';
import { type Io, indent, json } from './io.js';
import { type CredentialFormat, generateHolderKey, type HolderKey, type StoredCredential, type WalletStore } from './store.js';

export interface ReceiveOptions {
  store: WalletStore;
  io: Io;
  /** The transaction code, when the user was given it beforehand; else it is asked for if the offer needs one. */
  txCode?: string;
}

type TxCode = NonNullable<NonNullable<CredentialOfferObject['grants']>[typeof preAuthorizedCodeGrantIdentifier]>['tx_code'];

async function askTxCode(io: Io, txCode: NonNullable<TxCode>): Promise<string> {
  const shape = [txCode.length && `${txCode.length}`, txCode.input_mode === 'text' ? 'characters' : 'digits'].filter(Boolean).join(' ');
  const answer = await io.ask(`Transaction code${txCode.description ? ` (${txCode.description})` : ''}, ${shape}: `);
  if (!answer) throw new Error('the offer needs a transaction code (give it with --tx-code)');
  return answer;
}

const displayName = (metadata: IssuerMetadataResult, configurationId: string) => {
  const configuration = metadata.credentialIssuer.credential_configurations_supported[configurationId] as
    | { credential_metadata?: { display?: { name?: string }[] }; display?: { name?: string }[] }
    | undefined;
  return (configuration?.credential_metadata?.display ?? configuration?.display)?.[0]?.name ?? configurationId;
};

export async function receiveOffer(uri: string, { store, io, txCode }: ReceiveOptions): Promise<StoredCredential[]> {
  const holder = await store.holderKey();
  // A DPoP key of its own, used for this flow only: it proves possession of the access token, not of a credential.
  const dpopKey = await generateHolderKey();
  const client = new Openid4vciClient({ callbacks: { ...issuanceCallbacks([holder, dpopKey]), fetch: tracingFetch(io) } });

  io.print('Resolving the credential offer and the issuer metadata');
  const offer = await client.resolveCredentialOffer(uri);
  const metadata = await client.resolveIssuerMetadata(offer.credential_issuer);
  const grant = offer.grants?.[preAuthorizedCodeGrantIdentifier];
  if (!grant) throw new Error('this wallet redeems pre-authorized code offers only');
  const issuerName = metadata.credentialIssuer.display?.[0]?.name;
  io.print(`Issuer: ${offer.credential_issuer}${issuerName ? ` (${issuerName})` : ''}`);
  io.print(`Offered: ${offer.credential_configuration_ids.map((id) => displayName(metadata, id)).join(', ')}`);

  const code = grant.tx_code ? (txCode ?? (await askTxCode(io, grant.tx_code))) : undefined;
  const dpopAlgs = metadata.authorizationServers[0]?.dpop_signing_alg_values_supported ?? [];
  const dpop = dpopAlgs.includes('ES256') ? { signer: dpopKey.signer } : undefined;
  io.print(`Requesting an access token${code ? ' with the transaction code' : ''}${dpop ? ', bound to a DPoP key' : ''}`);
  const token = await client.retrievePreAuthorizedCodeAccessTokenFromOffer({
    credentialOffer: offer,
    issuerMetadata: metadata,
    ...(code && { txCode: code }),
    ...(dpop && { dpop }),
  });
  let dpopState = token.dpop;
  const accessToken = token.accessTokenResponse.access_token;

  const received: StoredCredential[] = [];
  for (const configurationId of offer.credential_configuration_ids) {
    const format = metadata.credentialIssuer.credential_configurations_supported[configurationId]?.format as CredentialFormat | undefined;
    if (format !== 'dc+sd-jwt' && format !== 'mso_mdoc')
      throw new Error(`${configurationId}: format ${format} is not supported by this wallet`);
    io.print(`Requesting ${displayName(metadata, configurationId)} (${format}) with a proof of the holder key`);
    const { c_nonce } = await client.requestNonce({ issuerMetadata: metadata });
    const proof = await client.createCredentialRequestJwtProof({
      issuerMetadata: metadata,
      signer: holder.signer,
      nonce: c_nonce,
      credentialConfigurationId: configurationId,
    });
    const response = await client.retrieveCredentials({
      issuerMetadata: metadata,
      accessToken,
      credentialConfigurationId: configurationId,
      proofs: { jwt: [proof.jwt] },
      ...(dpopState && { dpop: dpopState }),
    });
    if (dpopState && response.dpop) dpopState = { ...dpopState, nonce: response.dpop.nonce };
    const { credentials, transaction_id, notification_id } = response.credentialResponse;
    if (transaction_id) {
      io.print(
        `The issuer deferred ${configurationId} (transaction ${transaction_id}); this wallet does not poll for deferred credentials.`,
      );
      continue;
    }
    for (const { credential } of (credentials ?? []) as { credential: string }[]) {
      received.push(await keep(store, io, holder, { format, credential, configurationId, issuer: offer.credential_issuer }));
    }
    if (notification_id) {
      io.print('Telling the issuer the credential was accepted');
      await client.sendNotification({
        issuerMetadata: metadata,
        accessToken,
        notification: { notificationId: notification_id, event: 'credential_accepted' },
        ...(dpopState && { dpop: dpopState }),
      });
    }
  }
  return received;
}

async function keep(store: WalletStore, io: Io, holder: HolderKey, credential: Omit<StoredCredential, 'id' | 'receivedAt'>) {
  const view = await viewOf(credential);
  if (!boundTo(view, holder.publicJwk)) throw new Error(`the ${credential.format} credential is not bound to this wallet's key`);
  const stored = store.save(credential);
  io.print(`Stored ${stored.id} (${view.type}), signed by ${view.issuer}:`);
  io.print(indent(json(personalClaims(view)), 2));
  return stored;
}
