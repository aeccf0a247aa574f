import { useEffect, useState } from 'preact/hooks';
import { html } from '../browse/ui.js';
import { ConsoleCreateHoldDocument, CreateConsoleBookingDocument, PreviewNewBookingDocument, type PreviewNewBookingQuery } from '../generated/console/graphql.js';
import { describeError } from './errors.js';
import { api } from './session.js';
import { ruleFor, type Repeat } from './series-rule.js';
import { formatRange, formatTime, fromLocalInput, toLocalInput } from './time.js';
import { NO_CONFLICTS, type Conflicts, type Selection } from './week-grid.js';

type Preview = PreviewNewBookingQuery['previewBooking'];

/**
 * New booking: a range (from a drag on the grid, or typed here), an optional repeat, a dry run of
 * the create (`previewBooking`) as the fields change, then the create itself, or a hold of the range
 * for a few minutes (confirmed into a booking, or released, from the hold on the grid).
 */
export function BookingForm(props: {
  agentId: string;
  selection: Selection | null;
  onSelection: (selection: Selection | null) => void;
  onConflicts: (conflicts: Conflicts) => void;
  onCreated: (message: string) => void;
}) {
  const [start, setStart] = useState('');
  const [end, setEnd] = useState('');
  const [repeat, setRepeat] = useState<Repeat>('none');
  const [count, setCount] = useState('10');
  const [preview, setPreview] = useState<{ kind: 'idle' | 'checking' } | { kind: 'done'; preview: Preview } | { kind: 'error'; message: string }>({ kind: 'idle' });
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<string | null>(null);

  // A range selected on the grid fills the fields.
  useEffect(() => {
    if (!props.selection) return;
    setStart(toLocalInput(props.selection.startsAt));
    setEnd(toLocalInput(props.selection.endsAt));
    setError(null);
  }, [props.selection?.startsAt.getTime(), props.selection?.endsAt.getTime()]);

  const startsAt = fromLocalInput(start);
  const endsAt = fromLocalInput(end);
  const occurrences = Number(count);
  const countValid = repeat === 'none' || (Number.isInteger(occurrences) && occurrences >= 2 && occurrences <= 500);
  const problem = !startsAt || !endsAt ? null : endsAt <= startsAt ? 'The end must be after the start.' : !countValid ? 'Occurrences must be a whole number from 2 to 500.' : null;
  const input = startsAt && endsAt && !problem ? { agentId: props.agentId, startsAt: startsAt.toISOString(), endsAt: endsAt.toISOString(), rrule: ruleFor(repeat, occurrences, startsAt) } : null;
  const inputKey = JSON.stringify(input);

  // The dry run, a moment after the last change; its conflicts are marked on the grid too.
  useEffect(() => {
    if (!input) {
      setPreview({ kind: 'idle' });
      props.onConflicts(NO_CONFLICTS);
      return;
    }
    props.onSelection({ startsAt: startsAt!, endsAt: endsAt! });
    let live = true;
    setPreview({ kind: 'checking' });
    const timer = setTimeout(() => {
      api(PreviewNewBookingDocument, { input }).then(
        ({ previewBooking }) => {
          if (!live) return;
          setPreview({ kind: 'done', preview: previewBooking });
          props.onConflicts({
            bookingIds: new Set(previewBooking.conflicts.map((booking) => booking.id)),
            ranges: previewBooking.clashingOccurrences.map((slot) => ({ startsAt: new Date(slot.startsAt), endsAt: new Date(slot.endsAt) })),
          });
        },
        (failure: unknown) => live && setPreview({ kind: 'error', message: describeError(failure) }),
      );
    }, 250);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [inputKey]);

  const clear = () => {
    setStart('');
    setEnd('');
    setRepeat('none');
    setError(null);
    props.onSelection(null);
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    if (!input) {
      setError(problem ?? 'Give a start and an end.');
      return;
    }
    setSaving(true);
    setError(null);
    try {
      const { createBooking } = await api(CreateConsoleBookingDocument, { input });
      clear();
      props.onCreated(`Booked ${formatRange(new Date(createBooking.startsAt), new Date(createBooking.endsAt))}${createBooking.rrule ? ', repeating' : ''}.`);
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setSaving(false);
    }
  };

  const hold = async () => {
    if (!input) return setError(problem ?? 'Give a start and an end.');
    setSaving(true);
    setError(null);
    try {
      const { createHold } = await api(ConsoleCreateHoldDocument, { input: { startsAt: input.startsAt, endsAt: input.endsAt } });
      clear();
      props.onCreated(`Held ${formatRange(new Date(createHold.startsAt), new Date(createHold.endsAt))} until ${formatTime(new Date(createHold.expiresAt))}: open the hold on the calendar to confirm or release it.`);
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setSaving(false);
    }
  };

  return html`<form class="panel booking-form" onSubmit=${submit} aria-labelledby="new-booking-title" noValidate>
    <h2 id="new-booking-title">New booking</h2>
    <p class="hint">Drag on the calendar to pick a time, or type it here.</p>
    <label for="nb-start">Start</label>
    <input id="nb-start" type="datetime-local" step="900" value=${start} onInput=${(e: Event) => setStart((e.target as HTMLInputElement).value)} required />
    <label for="nb-end">End</label>
    <input id="nb-end" type="datetime-local" step="900" value=${end} onInput=${(e: Event) => setEnd((e.target as HTMLInputElement).value)} required />
    <label for="nb-repeat">Repeat</label>
    <select id="nb-repeat" value=${repeat} onChange=${(e: Event) => setRepeat((e.target as HTMLSelectElement).value as Repeat)}>
      <option value="none">Does not repeat</option>
      <option value="daily">Every day</option>
      <option value="weekdays">Every weekday</option>
      <option value="weekly">Every week</option>
    </select>
    ${repeat !== 'none'
      ? html`<label for="nb-count">Occurrences</label>
          <input id="nb-count" type="number" min="2" max="500" value=${count} onInput=${(e: Event) => setCount((e.target as HTMLInputElement).value)} />`
      : null}
    <div class="preview" role="status" aria-live="polite" data-testid="booking-preview">
      ${problem ? html`<span class="field-error">${problem}</span>` : null}
      ${preview.kind === 'checking' ? html`<span class="muted">Checking for conflicts…</span>` : null}
      ${preview.kind === 'error' ? html`<span class="field-error">${preview.message}</span>` : null}
      ${preview.kind === 'done' ? html`<${PreviewSummary} preview=${preview.preview} />` : null}
    </div>
    ${error ? html`<p class="field-error" role="alert">${error}</p>` : null}
    <div class="actions">
      <button type="submit" disabled=${saving}>${saving ? 'Saving…' : 'Create booking'}</button>
      <button type="button" class="secondary" disabled=${saving || repeat !== 'none'} title="Keeps the time for 5 minutes: no one else can take it until you confirm or release it"
        onClick=${hold}>Hold 5 minutes</button>
      <button type="button" class="secondary" onClick=${clear}>Clear</button>
    </div>
  </form>`;
}

function PreviewSummary({ preview }: { preview: Preview }) {
  if (preview.capReached) return html`<span class="field-error">The agent has reached its limit of live bookings.</span>`;
  const series = preview.occurrenceCount > 1 ? ` (${preview.occurrenceCount} occurrences)` : '';
  if (preview.available) return html`<span class="good">Free: nothing overlaps${series}.</span>`;
  const count = `${preview.conflicts.length}${preview.moreConflicts ? '+' : ''}`;
  const recurring = preview.conflicts.filter((booking) => booking.rrule).length;
  const taken = preview.clashingOccurrences;
  return html`<div class="conflicts">
    <span class="field-error">Overlaps ${count} booking${count === '1' ? '' : 's'}${recurring ? ` (${recurring === 1 && count === '1' ? 'a recurring one' : `${recurring} recurring`})` : ''}${series}.</span>
    ${taken.length
      ? html`<span>${taken.length === 1 ? 'Taken:' : `${taken.length} times are taken, from:`}</span>
          <ul>${taken.slice(0, 3).map((slot) => html`<li>${formatRange(new Date(slot.startsAt), new Date(slot.endsAt))}</li>`)}</ul>`
      : null}
  </div>`;
}
