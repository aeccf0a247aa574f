import { useEffect, useState } from 'preact/hooks';
import { html } from '../browse/ui.js';
import { ConsoleConfirmHoldDocument, ConsoleReleaseHoldDocument } from '../generated/console/graphql.js';
import { api } from './session.js';
import { formatRange, formatTime } from './time.js';
import type { WeekHold } from './week-data.js';
import { useAction } from './use-action.js';

/** The time now, ticking every `everyMs` while the component is on screen. */
function useNow(everyMs: number): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}

/** `4:05` left of a hold; `0:00` once it has expired. */
export function timeLeft(expiresAt: string, now: number): string {
  const seconds = Math.max(0, Math.ceil((Date.parse(expiresAt) - now) / 1000));
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
}

/**
 * A hold on the grid: dashed, amber, with the time it has left counting down. Once expired it leaves the
 * grid by itself, as it leaves the calendar: an expired hold blocks nothing and never becomes a booking.
 */
export function HoldBlock(props: { hold: WeekHold; open: boolean; style: Record<string, string>; onOpen: () => void }) {
  const now = useNow(1000);
  if (Date.parse(props.hold.expiresAt) <= now) return null;
  const left = timeLeft(props.hold.expiresAt, now);
  return html`<button
    type="button"
    class=${`slot hold${props.open ? ' open' : ''}`}
    style=${props.style}
    data-hold=${props.hold.id}
    aria-label=${`Hold, ${formatRange(new Date(props.hold.startsAt), new Date(props.hold.endsAt))}, ${left} left`}
    aria-pressed=${props.open}
    onClick=${props.onOpen}
  >Held <span class="hold-left">${left}</span></button>`;
}

/** A hold's details: its time, what it has left, and its two ends (confirm into a booking, or release). */
export function HoldDetails({ hold, onClose, onChanged }: { hold: WeekHold; onClose: () => void; onChanged: (message: string) => void }) {
  const now = useNow(1000);
  const { busy, error, run } = useAction(onChanged);
  const when = formatRange(new Date(hold.startsAt), new Date(hold.endsAt));
  const expired = Date.parse(hold.expiresAt) <= now;

  const confirm = () => run(() => api(ConsoleConfirmHoldDocument, { id: hold.id }), `Confirmed the hold: booked ${when}.`);
  const release = () => run(() => api(ConsoleReleaseHoldDocument, { id: hold.id }), `Released the hold of ${when}: the time is free again.`);

  return html`<section class="panel slot-details hold-details" aria-labelledby="hold-title" data-testid="hold-details">
    <div class="panel-head">
      <h2 id="hold-title" tabindex="-1">Hold</h2>
      <button type="button" class="link" aria-label="Close the hold" onClick=${onClose}>×</button>
    </div>
    <p>${when}</p>
    <p class=${expired ? 'field-error' : 'muted'} role="timer" data-testid="hold-left">
      ${expired ? 'Expired: its time was never booked.' : `Expires at ${formatTime(new Date(hold.expiresAt))} (${timeLeft(hold.expiresAt, now)} left). Until then no one else can take this time.`}
    </p>
    ${hold.calendars.length > 1 ? html`<p class="muted">On ${hold.calendars.length} calendars; confirming books them all.</p>` : null}
    ${error ? html`<p class="field-error" role="alert">${error}</p>` : null}
    <div class="actions">
      <button type="button" disabled=${busy || expired} onClick=${confirm}>Confirm booking</button>
      <button type="button" class="secondary" disabled=${busy || expired} onClick=${release}>Release</button>
    </div>
  </section>`;
}
