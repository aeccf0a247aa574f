import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../browse/api.js';
import { html } from '../browse/ui.js';
import { ConsoleRescheduleDocument, type RescheduleScope } from '../generated/console/graphql.js';
import { describeError } from './errors.js';
import { api } from './session.js';
import { formatRange, fromLocalInput, toLocalInput } from './time.js';
import type { WeekSlot } from './week-data.js';
import type { Selection } from './week-grid.js';

const SCOPES: { value: RescheduleScope; label: string }[] = [
  { value: 'occurrence', label: 'Only this occurrence' },
  { value: 'following', label: 'This and the following ones' },
  { value: 'series', label: 'The whole series' },
];

/** What a move of `slot` to `range` asks of `rescheduleBooking`, as of the version the person saw. */
export function rescheduleInput(slot: WeekSlot, range: Selection, scope: RescheduleScope, expectedVersion: number) {
  const base = { id: slot.booking.id, expectedVersion };
  if (!slot.booking.rrule) return { ...base, startsAt: range.startsAt.toISOString(), endsAt: range.endsAt.toISOString() };
  if (scope !== 'series') return { ...base, scope, occurrenceStartsAt: slot.startsAt, startsAt: range.startsAt.toISOString(), endsAt: range.endsAt.toISOString() };
  // The whole series moves by as much as this occurrence does: its first occurrence is what the mutation places.
  const shift = range.startsAt.getTime() - Date.parse(slot.startsAt);
  const startsAt = new Date(Date.parse(slot.booking.startsAt) + shift);
  return { ...base, scope, startsAt: startsAt.toISOString(), endsAt: new Date(startsAt.getTime() + (range.endsAt.getTime() - range.startsAt.getTime())).toISOString() };
}

/** A stale version: someone moved or changed the booking after this page read it. */
export function isStale(failure: unknown): boolean {
  return failure instanceof ApiError && failure.code === 'version_mismatch';
}

export const STALE_MESSAGE = 'This booking was changed elsewhere after the page showed it, so nothing was moved. The week has been reloaded: check its time and move it again.';

/** Moves `slot` (a single booking, or with `scope` an occurrence, the following ones or the whole series); answers what to tell. */
export async function moveBooking(slot: WeekSlot, range: Selection, scope: RescheduleScope, expectedVersion: number): Promise<string> {
  const { rescheduleBooking } = await api(ConsoleRescheduleDocument, { input: rescheduleInput(slot, range, scope, expectedVersion) });
  const what = slot.booking.rrule ? (scope === 'series' ? 'the series' : scope === 'following' ? 'this and the following occurrences' : 'the occurrence') : 'the booking';
  return `Moved ${what} to ${formatRange(range.startsAt, range.endsAt)}${rescheduleBooking.id === slot.booking.id ? '' : ' (now a booking of its own)'}.`;
}

/**
 * The keyboard way to what a drag does: a new start and end for this occurrence, and for a series which
 * occurrences move. It keeps the version the booking had when the form opened: a change made elsewhere
 * meanwhile is `version_mismatch`, said plainly, and the week reloads.
 */
export function RescheduleForm(props: { slot: WeekSlot; proposed: Selection | null; onMoved: (message: string) => void; onStale: () => void; onCancel: () => void }) {
  const { slot } = props;
  const [start, setStart] = useState(toLocalInput(props.proposed?.startsAt ?? new Date(slot.startsAt)));
  const [end, setEnd] = useState(toLocalInput(props.proposed?.endsAt ?? new Date(slot.endsAt)));
  const [scope, setScope] = useState<RescheduleScope>('occurrence');
  // The version the person is editing; adopted again from the page only after a stale one was refused.
  const [version, setVersion] = useState<number | null>(slot.booking.version);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (version === null) setVersion(slot.booking.version);
  }, [version, slot.booking.version]);

  const submit = async (event: Event) => {
    event.preventDefault();
    const startsAt = fromLocalInput(start);
    const endsAt = fromLocalInput(end);
    if (!startsAt || !endsAt) return setError('Give a new start and end.');
    if (endsAt <= startsAt) return setError('The end must be after the start.');
    setBusy(true);
    setError(null);
    try {
      props.onMoved(await moveBooking(slot, { startsAt, endsAt }, scope, version ?? slot.booking.version));
    } catch (failure) {
      if (isStale(failure)) {
        setError(STALE_MESSAGE);
        setVersion(null);
        props.onStale();
      } else setError(describeError(failure));
    } finally {
      setBusy(false);
    }
  };

  return html`<form class="booking-form move-form" onSubmit=${submit} aria-labelledby="move-title" noValidate data-testid="move-form">
    <h3 id="move-title">Move</h3>
    <label for="mv-start">New start</label>
    <input id="mv-start" type="datetime-local" step="900" value=${start} onInput=${(e: Event) => setStart((e.target as HTMLInputElement).value)} />
    <label for="mv-end">New end</label>
    <input id="mv-end" type="datetime-local" step="900" value=${end} onInput=${(e: Event) => setEnd((e.target as HTMLInputElement).value)} />
    ${slot.booking.rrule
      ? html`<label for="mv-scope">Which occurrences</label>
          <select id="mv-scope" value=${scope} onChange=${(e: Event) => setScope((e.target as HTMLSelectElement).value as RescheduleScope)}>
            ${SCOPES.map((option) => html`<option value=${option.value}>${option.label}</option>`)}
          </select>`
      : null}
    ${error ? html`<p class="field-error" role="alert" data-testid="move-error">${error}</p>` : null}
    <div class="actions">
      <button type="submit" disabled=${busy}>${busy ? 'Moving…' : 'Move booking'}</button>
      <button type="button" class="secondary" onClick=${props.onCancel}>Keep it where it is</button>
    </div>
  </form>`;
}
