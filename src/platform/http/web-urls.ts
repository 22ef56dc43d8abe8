// URLs the service hands to wallets and browsers (where to send the user after a presentation,
// logos, the origins a page may call from): a browser follows or renders them, so anything but a web
// URL (javascript:, data:, file:, a custom scheme) is refused, and in production http: as well.
//
// The schemas are module constants while production is a setting of the app, so the app runs every
// validation of a request inside its policy (withWebUrlPolicy); other input, such as configuration
// files, runs inside one too (underWebUrlPolicy). Where none was set, production's rules apply, so
// input judged by mistake outside a policy is judged strictly. Responses and stored documents parsed
// again are not judged ('unjudged'): data saved under another policy (a development instance, a
// release before these rules) stays readable.
import { AsyncLocalStorage } from 'node:async_hooks';
import { z } from 'zod';

export interface WebUrlPolicy {
  /** http: besides https:, outside production. */
  allowHttp: boolean;
}
type Scope = WebUrlPolicy | 'unjudged';

const PRODUCTION: WebUrlPolicy = { allowHttp: false };
const scopes = new AsyncLocalStorage<Scope>();

/** http is for development: production sends wallets and browsers to https only. */
export const webUrlPolicyFor = (nodeEnv: string): WebUrlPolicy => ({ allowHttp: nodeEnv !== 'production' });

export const underWebUrlPolicy = <T>(scope: Scope, run: () => T): T => scopes.run(scope, run);

/** A Fastify validator or serializer compiler whose every run is under `scope`. */
export function withWebUrlPolicy<Route, Result>(
  compiler: (route: Route) => (data: unknown) => Result,
  scope: Scope,
): (route: Route) => (data: unknown) => Result {
  return (route) => {
    const run = compiler(route);
    return (data) => scopes.run(scope, () => run(data));
  };
}

type Kind = 'URL' | 'origin';

function webUrlProblem({ allowHttp }: WebUrlPolicy, value: string, kind: Kind): string | undefined {
  const schemes = allowHttp ? 'http or https' : 'https';
  const example = kind === 'origin' ? ' such as https://shop.example.com' : '';
  if (!URL.canParse(value)) return `must be an absolute ${schemes} ${kind}${example}`;
  // Judged as a browser parses it: WHATWG URL drops tabs and newlines and lower-cases the scheme.
  const url = new URL(value);
  if (url.protocol === 'http:' && !allowHttp) return `must be an https ${kind}: http is accepted outside production only`;
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `must be an ${schemes} ${kind}; ${url.protocol} is refused`;
  if (url.username || url.password) return 'must not carry credentials (user:password@), which disguise the host a browser goes to';
  if (kind === 'origin' && url.origin !== value) return `must be an origin (scheme, host and port only): did you mean ${url.origin}?`;
  return undefined;
}

/** What the checks see in place of a placeholder: text valid in a host and a path, as a session id is. */
const PLACEHOLDER_STAND_IN = 'placeholder';

function templateProblem(policy: WebUrlPolicy, value: string, placeholder: string): string | undefined {
  const filled = value.replaceAll(placeholder, PLACEHOLDER_STAND_IN);
  const other = filled.match(/\{[^}]*\}/)?.[0];
  return other ? `only the placeholder ${placeholder} is replaced; ${other} is not` : webUrlProblem(policy, filled, 'URL');
}

function judged(max: number, problem: (policy: WebUrlPolicy, value: string) => string | undefined) {
  return z
    .string()
    .min(1)
    .max(max)
    .superRefine((value, ctx) => {
      const scope = scopes.getStore() ?? PRODUCTION;
      const message = scope !== 'unjudged' && problem(scope, value);
      if (message) ctx.addIssue({ code: 'custom', message });
    });
}

export interface WebUrlOptions {
  max?: number;
  /** Replaced by the service before the URL is used, e.g. {sessionId}; any other {...} is refused. */
  placeholder?: string;
}

/** An absolute https URL (http too outside production) for a wallet or browser. */
export const webUrl = ({ max = 2048, placeholder }: WebUrlOptions = {}) =>
  judged(max, (policy, value) => (placeholder ? templateProblem(policy, value, placeholder) : webUrlProblem(policy, value, 'URL')));

/** A browser origin, https://host[:port] (http too outside production), as the Digital Credentials API reports it. */
export const webOrigin = () => judged(2048, (policy, value) => webUrlProblem(policy, value, 'origin'));
