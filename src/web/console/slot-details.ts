import { useState } from 'preact/hooks';
import { html } from '../browse/ui.js';
import { CancelConsoleBookingDocument, CancelConsoleOccurrenceDocument } from '../generated/console/graphql.js';
import { RescheduleForm } from './reschedule.js';
import { api } from './session.js';
import { describeRule } from './series-rule.js';
import { formatDate, formatRange } from './time.js';
import type { WeekSlot } from './week-data.js';
import type { Selection } from './week-grid.js';
import { useAction } from './use-action.js';

/** One slot's details: its time, its series, moving it (to a range a drag proposed, or typed), and the two ways to cancel. */
export function SlotDetails({
  slot,
  proposed,
  onClose,
  onChanged,
  onStale,
}: {
  slot: WeekSlot;
  /** Where a drag dropped it (a series asks which occurrences move before moving). */
  proposed: Selection | null;
  onClose: () => void;
  onChanged: (message: string) => void;
  onStale: () => void;
}) {
  const [moving, setMoving] = useState(proposed !== null);
  const [confirming, setConfirming] = useState(false);
  const { busy, error, run } = useAction(onChanged);
  const series = slot.booking.rrule !== null;
  const when = formatRange(new Date(slot.startsAt), new Date(slot.endsAt));

  const cancelOccurrence = () =>
    run(() => api(CancelConsoleOccurrenceDocument, { bookingId: slot.booking.id, startsAt: slot.startsAt }), `Cancelled the occurrence of ${when}.`);
  const cancelBooking = () => run(() => api(CancelConsoleBookingDocument, { id: slot.booking.id }), series ? 'Cancelled the whole series.' : `Cancelled ${when}.`);

  return html`<section class="panel slot-details" aria-labelledby="slot-title" data-testid="slot-details">
    <div class="panel-head">
      <h2 id="slot-title" tabindex="-1">${series ? 'Recurring booking' : 'Booking'}</h2>
      <button type="button" class="link" aria-label="Close the details" onClick=${onClose}>×</button>
    </div>
    <p>${when}</p>
    ${series
      ? html`<p class="muted">Repeats ${describeRule(slot.booking.rrule!)}; first on ${formatDate(new Date(slot.booking.startsAt))}.</p>`
      : null}
    ${error ? html`<p class="field-error" role="alert">${error}</p>` : null}
    ${moving
      ? html`<${RescheduleForm} slot=${slot} proposed=${proposed} onMoved=${onChanged} onStale=${onStale} onCancel=${() => setMoving(false)} />`
      : null}
    <div class="actions">
      ${moving ? null : html`<button type="button" class="secondary" disabled=${busy} onClick=${() => setMoving(true)}>Move…</button>`}
      ${series ? html`<button type="button" disabled=${busy} onClick=${cancelOccurrence}>Cancel this occurrence</button>` : null}
      ${confirming
        ? html`<span class="confirm">
            <span>${series ? 'Cancel every occurrence?' : 'Cancel this booking?'}</span>
            <button type="button" class="danger" disabled=${busy} onClick=${cancelBooking}>Yes, cancel</button>
            <button type="button" class="secondary" onClick=${() => setConfirming(false)}>Keep it</button>
          </span>`
        : html`<button type="button" class="secondary" disabled=${busy} onClick=${() => setConfirming(true)}>${series ? 'Cancel the series' : 'Cancel booking'}</button>`}
    </div>
  </section>`;
}
