import { useEffect, useState } from 'preact/hooks';
import { Failure, html, Loading, Notice } from '../browse/ui.js';
import { BookingForm } from './booking-form.js';
import { describeError } from './errors.js';
import { HoldDetails } from './holds.js';
import type { LiveHub } from './live.js';
import { isStale, moveBooking, STALE_MESSAGE } from './reschedule.js';
import { SlotDetails } from './slot-details.js';
import { addDays, dateKey, formatDate, startOfWeek } from './time.js';
import { useWeekSlots, type WeekHold, type WeekSlot } from './week-data.js';
import { NO_CONFLICTS, slotKey, WeekGrid, type Conflicts, type Selection } from './week-grid.js';

type CalendarNotice = { kind: 'info' | 'error'; text: string };

/**
 * The calendar tab: a week of slots (kept live) over the working time its rules leave, the agent's holds,
 * week navigation, the new-booking form (book or hold), and a slot's or a hold's details. A booking dragged
 * to a new time is rescheduled at once (a series first asks which occurrences move).
 */
export function CalendarView(props: { agentId: string; weekStart: Date; onWeek: (weekStart: Date) => void; hub: LiveHub }) {
  const { data, reload, apply } = useWeekSlots(props.weekStart);
  const [selection, setSelection] = useState<Selection | null>(null);
  const [conflicts, setConflicts] = useState<Conflicts>(NO_CONFLICTS);
  const [openKey, setOpenKey] = useState<string | null>(null);
  const [proposedMove, setProposedMove] = useState<Selection | null>(null);
  const [openHoldId, setOpenHoldId] = useState<string | null>(null);
  const [notice, setNotice] = useState<CalendarNotice | null>(null);
  /** Holds this page confirmed or released: off the grid at once, not when the reload answers. */
  const [endedHolds, setEndedHolds] = useState<ReadonlySet<string>>(new Set());

  useEffect(() => props.hub.listen((signal) => (signal.kind === 'gap' ? reload() : apply(signal.event))), [apply, reload]);

  const slots = data.status === 'ready' ? data.slots : [];
  const holds =
    data.status === 'ready' ? data.holds.filter((hold) => !endedHolds.has(hold.id) && hold.calendars.some((calendar) => calendar.agentId === props.agentId)) : [];
  const open = slots.find((slot) => slotKey(slot) === openKey) ?? null;
  const openHold = holds.find((hold) => hold.id === openHoldId) ?? null;
  const changed = (message: string) => {
    setNotice({ kind: 'info', text: message });
    setOpenKey(null);
    setOpenHoldId(null);
    reload();
  };
  const openSlot = (slot: WeekSlot, proposed: Selection | null = null) => {
    setOpenHoldId(null);
    setProposedMove(proposed);
    setOpenKey(slotKey(slot));
    requestAnimationFrame(() => document.getElementById(proposed ? 'mv-start' : 'slot-title')?.focus());
  };
  const move = async (slot: WeekSlot, range: Selection) => {
    // Which occurrences move is the person's choice: a series opens its form at the dropped time.
    if (slot.booking.rrule) return openSlot(slot, range);
    setNotice(null);
    try {
      changed(await moveBooking(slot, range, 'occurrence', slot.booking.version));
    } catch (failure) {
      setNotice({ kind: 'error', text: isStale(failure) ? STALE_MESSAGE : `Not moved: ${describeError(failure)}` });
      reload();
    }
  };
  const thisWeek = startOfWeek(new Date());

  return html`<section class="calendar" aria-labelledby="calendar-title">
    <div class="week-nav">
      <h2 id="calendar-title">Week of ${formatDate(props.weekStart)}</h2>
      <div class="actions">
        <button type="button" class="secondary" onClick=${() => props.onWeek(addDays(props.weekStart, -7))}>← Previous<span class="visually-hidden"> week</span></button>
        <button type="button" class="secondary" disabled=${dateKey(thisWeek) === dateKey(props.weekStart)} onClick=${() => props.onWeek(thisWeek)}>This week</button>
        <button type="button" class="secondary" onClick=${() => props.onWeek(addDays(props.weekStart, 7))}>Next<span class="visually-hidden"> week</span> →</button>
      </div>
    </div>
    ${notice ? html`<${Notice} kind=${notice.kind} onClose=${() => setNotice(null)}>${notice.text}<//>` : null}
    <div class="calendar-layout">
      <div class="calendar-main">
        ${data.status === 'loading' ? html`<${Loading} label="Loading the week…" />` : null}
        ${data.status === 'error' ? html`<${Failure} message=${data.message} retry=${reload} />` : null}
        <${WeekGrid}
          weekStart=${props.weekStart}
          slots=${slots}
          working=${data.status === 'ready' ? data.working : null}
          holds=${holds}
          selection=${selection}
          conflicts=${conflicts}
          openKey=${openKey}
          openHold=${openHoldId}
          onSelect=${(range: Selection) => {
            setOpenKey(null);
            setOpenHoldId(null);
            setSelection(range);
            // On a narrow screen the form is below the grid: bring it into view.
            document.getElementById('new-booking-title')?.scrollIntoView({ block: 'nearest' });
          }}
          onOpen=${(slot: WeekSlot) => openSlot(slot)}
          onOpenHold=${(hold: WeekHold) => {
            setOpenKey(null);
            setOpenHoldId(hold.id);
            requestAnimationFrame(() => document.getElementById('hold-title')?.focus());
          }}
          onMove=${move}
        />
        <p class="muted legend">
          ${slots.length} booked slot${slots.length === 1 ? '' : 's'} this week · ↻ part of a series · drag a booking to move it
          ${data.status === 'ready' && data.working ? html` · <span class="legend-off">shaded</span>: outside working hours` : null}
          ${holds.length ? html` · <span class="legend-hold">dashed</span>: held, not yet booked` : null}
        </p>
      </div>
      <div class="calendar-side">
        ${openHold
          ? html`<${HoldDetails}
              key=${openHold.id}
              hold=${openHold}
              onClose=${() => setOpenHoldId(null)}
              onChanged=${(message: string) => {
                setEndedHolds((ended) => new Set([...ended, openHold.id]));
                changed(message);
              }}
            />`
          : null}
        ${open
          ? html`<${SlotDetails}
              key=${`${openKey}|${proposedMove?.startsAt.getTime() ?? ''}`}
              slot=${open}
              proposed=${proposedMove}
              onClose=${() => setOpenKey(null)}
              onChanged=${changed}
              onStale=${reload}
            />`
          : null}
        <${BookingForm}
          agentId=${props.agentId}
          selection=${selection}
          onSelection=${setSelection}
          onConflicts=${setConflicts}
          onCreated=${(message: string) => {
            setNotice({ kind: 'info', text: message });
            reload();
          }}
        />
      </div>
    </div>
  </section>`;
}
