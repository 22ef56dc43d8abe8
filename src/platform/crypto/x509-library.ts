// @peculiar/x509, for what node:crypto cannot do with certificates: read their extensions (mdoc
// verification). Key chains make their certificates and CRLs without it (der.ts). It needs
// reflect-metadata loaded first and a WebCrypto provider; both are set here once. Only modules
// loaded on first use import it: with the ASN.1 libraries under it, it is the largest thing the
// service would otherwise load at start.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { cryptoWithDelegatedKeys } from './delegated-keys.js';

// Node's WebCrypto, with keys held by an HSM or a KMS signing through their provider (delegated-keys.ts).
x509.cryptoProvider.set(cryptoWithDelegatedKeys as unknown as Crypto);

export { x509 };
