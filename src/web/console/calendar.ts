import { useEffect, useState } from 'preact/hooks';
import { Failure, html, Loading, Notice } from '../browse/ui.js';
import { BookingForm } from './booking-form.js';
import type { LiveHub } from './live.js';
import { SlotDetails } from './slot-details.js';
import { addDays, dateKey, formatDate, startOfWeek } from './time.js';
import { useWeekSlots } from './week-data.js';
import { NO_CONFLICTS, slotKey, WeekGrid, type Conflicts, type Selection } from './week-grid.js';

/** The calendar tab: a week of slots (kept live), week navigation, the new-booking form and a slot's details. */
export function CalendarView(props: { agentId: string; weekStart: Date; onWeek: (weekStart: Date) => void; hub: LiveHub }) {
  const { data, reload, apply } = useWeekSlots(props.weekStart);
  const [selection, setSelection] = useState<Selection | null>(null);
  const [conflicts, setConflicts] = useState<Conflicts>(NO_CONFLICTS);
  const [openKey, setOpenKey] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  useEffect(() => props.hub.listen((signal) => (signal.kind === 'gap' ? reload() : apply(signal.event))), [apply, reload]);

  const slots = data.status === 'ready' ? data.slots : [];
  const open = slots.find((slot) => slotKey(slot) === openKey) ?? null;
  const changed = (message: string) => {
    setNotice(message);
    setOpenKey(null);
    reload();
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
    ${notice ? html`<${Notice} kind="info" onClose=${() => setNotice(null)}>${notice}<//>` : null}
    <div class="calendar-layout">
      <div class="calendar-main">
        ${data.status === 'loading' ? html`<${Loading} label="Loading the week…" />` : null}
        ${data.status === 'error' ? html`<${Failure} message=${data.message} retry=${reload} />` : null}
        <${WeekGrid}
          weekStart=${props.weekStart}
          slots=${slots}
          selection=${selection}
          conflicts=${conflicts}
          openKey=${openKey}
          onSelect=${(range: Selection) => {
            setOpenKey(null);
            setSelection(range);
            // On a narrow screen the form is below the grid: bring it into view.
            document.getElementById('new-booking-title')?.scrollIntoView({ block: 'nearest' });
          }}
          onOpen=${(slot: (typeof slots)[number]) => {
            setOpenKey(slotKey(slot));
            requestAnimationFrame(() => document.getElementById('slot-title')?.focus());
          }}
        />
        <p class="muted legend">${slots.length} booked slot${slots.length === 1 ? '' : 's'} this week · ↻ part of a series</p>
      </div>
      <div class="calendar-side">
        ${open ? html`<${SlotDetails} key=${openKey} slot=${open} onClose=${() => setOpenKey(null)} onChanged=${changed} />` : null}
        <${BookingForm}
          agentId=${props.agentId}
          selection=${selection}
          onSelection=${setSelection}
          onConflicts=${setConflicts}
          onCreated=${(message: string) => {
            setNotice(message);
            reload();
          }}
        />
      </div>
    </div>
  </section>`;
}
