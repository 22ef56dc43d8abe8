// What an Issue or Verify page shows once its offer or request is made: the URI as a QR code with
// copy buttons, and the session's fate as it happens. The card scrolls into view and its heading
// takes the focus, so that a screen reader announces it. Once the wallet has used it, or it failed,
// or its time ran out (a timer at expiresAt: the service sends no event for that), the QR code goes
// and the card says why it can no longer be used.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { CopyButton, formatDate, Qr } from '../components.js';
import { StatusBadge } from './live-session.js';

/** Longest delay setTimeout takes; a later expiry is checked again after it. */
const MAX_DELAY = 2 ** 31 - 1;

/** Whether `expiresAt` has passed, turning true when it does. */
function useExpired(expiresAt: string) {
  const [expired, setExpired] = useState(false);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout>;
    const check = () => {
      const left = Date.parse(expiresAt) - Date.now();
      if (left <= 0) setExpired(true);
      else timer = setTimeout(check, Math.min(left, MAX_DELAY));
    };
    check();
    return () => clearTimeout(timer);
  }, [expiresAt]);
  return expired;
}

export type ResultState = 'open' | 'used' | 'failed' | 'expired';

export const resultState = (status: string | undefined, expired: boolean): ResultState =>
  status === 'completed' ? 'used' : status === 'failed' ? 'failed' : status === 'expired' || expired ? 'expired' : 'open';

export function ResultCard(props: {
  /** The card's name (a region): "offer", "presentation request". */
  label: string;
  title: string;
  session: string;
  expiresAt: string;
  /** The session's status as it changes (useLiveStatus). */
  status?: string;
  /** The link a wallet opens, shown as a QR code while it can be used. */
  uri?: { text: string; name: string; testId: string; qrLabel: string };
  /** What the card says once the wallet has done its part. */
  used: string;
  children?: ComponentChildren;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  const expired = useExpired(props.expiresAt);
  const state = resultState(props.status, expired);
  useEffect(() => {
    heading.current?.scrollIntoView({ block: 'start' });
    heading.current?.focus({ preventScroll: true });
  }, [props.session]);
  const { uri } = props;
  return (
    <section class={`card result result-${state}`} aria-label={props.label}>
      <h3 ref={heading} tabIndex={-1}>
        {props.title} <StatusBadge status={state === 'expired' ? 'expired' : props.status} />
      </h3>
      {state !== 'open' && (
        <p class="result-end" data-testid="result-end">
          {state === 'used'
            ? props.used
            : state === 'failed'
              ? 'Failed: it can no longer be used.'
              : 'Expired: no wallet can use it any more.'}
        </p>
      )}
      {uri && (
        <>
          {state === 'open' && <Qr text={uri.text} label={uri.qrLabel} />}
          <p class={state === 'open' ? undefined : 'spent'}>
            {state !== 'open' && <span class="muted">No longer usable: </span>}
            <code data-testid={uri.testId}>{uri.text}</code> {state === 'open' && <CopyButton text={uri.text} label={uri.name} />}
          </p>
        </>
      )}
      <p class="muted">
        Session <a href={`#/sessions/${encodeURIComponent(props.session)}`}>{props.session}</a>, valid until {formatDate(props.expiresAt)}
      </p>
      {props.children}
    </section>
  );
}
