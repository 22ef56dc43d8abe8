// The command line of the demo wallet: which command, which options, and how failures are reported.
import { parseArgs } from 'node:util';
import { personalClaims, viewOf } from './credentials.js';
import { abbreviate, type Io, indent, json, qrCode } from './io.js';
import { answerRequest } from './present.js';
import { receiveOffer } from './receive.js';
import { WalletStore } from './store.js';

export const USAGE = `A command-line holder wallet for trying svc's flows without a phone.

Usage: npm run wallet -- [options] <uri>
  openid-credential-offer://...   redeem a credential offer (pre-authorized code) and store the credentials
  openid4vp://...                 answer a presentation request with stored credentials
       npm run wallet -- list     show the stored credentials: id, format, type, issuer, when issued, claims
       npm run wallet -- rm <id>  remove one stored credential
       npm run wallet -- reset    remove every stored credential and the holder key (asks first; --yes does not)
       npm run wallet -- qr <uri> print an offer or request URI as a QR code, for a phone wallet

Options:
  --dir <folder>       wallet folder holding the holder key and credentials (default ./wallet-data, or $WALLET_DIR)
  --tx-code <code>     the offer's transaction code (asked for on the terminal when needed and not given)
  --credential <id>    present this stored credential (see list) instead of the one the wallet would choose
  --yes                send a presentation, or reset, without asking
  -h, --help           this text`;

const OFFER_SCHEMES = new Set(['openid-credential-offer:']);
const REQUEST_SCHEMES = new Set(['openid4vp:', 'haip:', 'eudi-openid4vp:']);

/** What the URI asks the wallet to do, by its scheme or, for https links, by its parameters. */
export function kindOf(uri: string): 'offer' | 'request' | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return undefined;
  }
  if (OFFER_SCHEMES.has(url.protocol) || url.searchParams.has('credential_offer_uri') || url.searchParams.has('credential_offer'))
    return 'offer';
  if (REQUEST_SCHEMES.has(url.protocol) || url.searchParams.has('request_uri') || url.searchParams.has('request')) return 'request';
  return undefined;
}

/** The protocol error a server answered with, when there is one, else the message. */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const { errorResponse, textResponse } = err as { errorResponse?: { error: string; error_description?: string }; textResponse?: string };
  if (errorResponse)
    return oneLine(`${errorResponse.error}${errorResponse.error_description ? `: ${errorResponse.error_description}` : ''}`);
  return oneLine(textResponse ? `${err.message} (${abbreviate(textResponse, 300)})` : err.message);
}

/** Library messages (validation issues, server answers) can span lines; a failure is reported on one. */
const oneLine = (text: string) => text.replace(/\s*\n\s*/g, ' ').trim();

async function list(store: WalletStore, io: Io) {
  const stored = store.list();
  if (stored.length === 0) io.print(`No credentials in ${store.dir}.`);
  for (const credential of stored) {
    try {
      const view = await viewOf(credential);
      const issued = view.issuedAt ? `issued ${view.issuedAt}` : `received ${credential.receivedAt}`;
      io.print(`${credential.id}  ${view.format}  ${view.type}  from ${credential.issuer} (${view.issuer}), ${issued}`);
      io.print(indent(json(personalClaims(view)), 2));
    } catch (err) {
      io.print(`${credential.id}  ${credential.format}  unreadable: ${describeError(err)}`);
    }
  }
}

async function reset(store: WalletStore, io: Io, yes: boolean): Promise<number> {
  const question = `Remove every credential and the holder key from ${store.dir}? [y/N] `;
  if (!yes && !/^y(es)?$/i.test(await io.ask(question))) {
    io.print('Nothing was removed.');
    return 1;
  }
  io.print(`Removed ${store.reset()} credential(s) and the holder key from ${store.dir}.`);
  return 0;
}

/** Runs one wallet command; returns the process exit code (0 done, 1 failed or declined, 2 usage). */
export async function runWallet(argv: string[], io: Io, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    io.print(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, argument] = positionals;
  if (values.help || !command) {
    io.print(USAGE);
    return values.help ? 0 : 2;
  }
  const store = new WalletStore(values.dir ?? env.WALLET_DIR ?? './wallet-data');
  try {
    if (command === 'list') {
      await list(store, io);
      return 0;
    }
    if (command === 'rm') {
      if (!argument) throw new UsageError('rm needs the id of the credential to remove (npm run wallet -- list shows them)');
      if (!store.remove(argument)) throw new Error(`no stored credential '${abbreviate(argument)}' in ${store.dir}`);
      io.print(`Removed ${argument}.`);
      return 0;
    }
    if (command === 'reset') return await reset(store, io, values.yes === true);
    if (command === 'qr') {
      if (!argument) throw new UsageError('qr needs the URI to draw');
      io.print(await qrCode(argument));
      io.print(argument);
      return 0;
    }
    const kind = kindOf(command);
    if (kind === 'offer') {
      const received = await receiveOffer(command, { store, io, ...(values['tx-code'] && { txCode: values['tx-code'] }) });
      io.print(`Received ${received.length} credential(s) into ${store.dir}.`);
      return received.length > 0 ? 0 : 1;
    }
    if (kind === 'request') {
      const options = { store, io, yes: values.yes === true, ...(values.credential && { credentialId: values.credential }) };
      return (await answerRequest(command, options)).sent ? 0 : 1;
    }
    throw new UsageError(`not an offer or presentation request URI, nor a command: ${abbreviate(command)}`);
  } catch (err) {
    if (err instanceof UsageError) {
      io.print(`${err.message}\n\n${USAGE}`);
      return 2;
    }
    io.print(`error: ${describeError(err)}`);
    return 1;
  }
}

class UsageError extends Error {}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      dir: { type: 'string' },
      'tx-code': { type: 'string' },
      credential: { type: 'string' },
      yes: { type: 'boolean', short: 'y' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}
