import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../browse/ui.js';
import { addDays, atMinutes, dateKey, formatDay, formatRange, formatTime, minutesInto } from './time.js';
import type { WeekSlot } from './week-data.js';

/** Pixels per hour of the grid; positions are set through the CSSOM (`style` objects), which the page's CSP allows. */
const HOUR_PX = 40;
const SNAP_MINUTES = 15;
/** A tap (no drag) selects an hour. */
const TAP_MINUTES = 60;

export interface Selection {
  startsAt: Date;
  endsAt: Date;
}

/** What a preview found: the existing bookings it overlaps, and the new occurrences' times that clash. */
export interface Conflicts {
  bookingIds: ReadonlySet<string>;
  ranges: readonly Selection[];
}

export const NO_CONFLICTS: Conflicts = { bookingIds: new Set(), ranges: [] };

/** Marks only the slots that meet a clashing time, not every occurrence of a conflicting series. */
function clashes(slot: WeekSlot, conflicts: Conflicts): boolean {
  if (!conflicts.bookingIds.has(slot.booking.id)) return false;
  const startsAt = new Date(slot.startsAt);
  const endsAt = new Date(slot.endsAt);
  return conflicts.ranges.some((range) => range.startsAt < endsAt && range.endsAt > startsAt);
}

interface Drag {
  day: Date;
  anchor: number;
  current: number;
  moved: boolean;
}

const px = (minutes: number) => `${(minutes / 60) * HOUR_PX}px`;
const snap = (minutes: number) => Math.max(0, Math.min(1440 - SNAP_MINUTES, Math.floor(minutes / SNAP_MINUTES) * SNAP_MINUTES));

/**
 * Seven day columns of 24 hours. Slots are buttons (focusable, labelled with their time); dragging on
 * free space selects a range, in quarter hours, and hands it to `onSelect`. The keyboard way to the
 * same thing is the booking form next to the grid.
 */
export function WeekGrid(props: {
  weekStart: Date;
  slots: WeekSlot[];
  selection: Selection | null;
  /** What the selection would overlap (from previewBooking). */
  conflicts: Conflicts;
  /** `slotKey` of the slot whose details are open. */
  openKey: string | null;
  onSelect: (selection: Selection) => void;
  onOpen: (slot: WeekSlot) => void;
}) {
  const days = Array.from({ length: 7 }, (_, index) => addDays(props.weekStart, index));
  const scroller = useRef<HTMLDivElement>(null);
  // The drag in progress: a ref for the pointer handlers (events can come faster than renders), state to draw it.
  const dragging = useRef<Drag | null>(null);
  const [drag, setDragView] = useState<Drag | null>(null);
  const setDrag = (next: Drag | null) => {
    dragging.current = next;
    setDragView(next);
  };

  // Open on the working day rather than at midnight.
  useEffect(() => {
    if (scroller.current) scroller.current.scrollTop = 7 * HOUR_PX;
  }, []);

  const minuteAt = (event: PointerEvent) => {
    const column = event.currentTarget as HTMLElement;
    return ((event.clientY - column.getBoundingClientRect().top) / HOUR_PX) * 60;
  };
  const down = (day: Date) => (event: PointerEvent) => {
    if (event.button !== 0 || event.target !== event.currentTarget) return;
    event.preventDefault();
    (event.currentTarget as HTMLElement).setPointerCapture(event.pointerId);
    const minute = snap(minuteAt(event));
    setDrag({ day, anchor: minute, current: minute, moved: false });
  };
  const move = (event: PointerEvent) => {
    const current = dragging.current;
    if (!current) return;
    const minute = snap(minuteAt(event));
    if (minute !== current.current) setDrag({ ...current, current: minute, moved: true });
  };
  const up = () => {
    const current = dragging.current;
    if (!current) return;
    const [from, to] = dragRange(current);
    setDrag(null);
    props.onSelect({ startsAt: atMinutes(current.day, from), endsAt: atMinutes(current.day, to) });
  };

  return html`<div class="week" role="group" aria-label=${`Week of ${formatDay(props.weekStart)}`}>
    <div class="week-head" aria-hidden="true">
      <span></span>
      ${days.map((day) => html`<span class=${dateKey(day) === dateKey(new Date()) ? 'today' : ''}>${formatDay(day)}</span>`)}
    </div>
    <div class="week-body" ref=${scroller} tabindex="0" aria-label="The week's hours (scrolls)">
      <div class="week-grid">
        <div class="hours" aria-hidden="true">
          ${Array.from({ length: 23 }, (_, index) => html`<span style=${{ top: px((index + 1) * 60) }}>${String(index + 1).padStart(2, '0')}:00</span>`)}
        </div>
        ${days.map((day) => {
          const dayEnd = addDays(day, 1);
          const pieces = props.slots.filter((slot) => new Date(slot.startsAt) < dayEnd && new Date(slot.endsAt) > day);
          const selected = props.selection && props.selection.startsAt < dayEnd && props.selection.endsAt > day ? props.selection : null;
          const dragged = drag && drag.day.getTime() === day.getTime() ? dragRange(drag) : null;
          return html`<div
            class="day"
            data-day=${dateKey(day)}
            onPointerDown=${down(day)}
            onPointerMove=${move}
            onPointerUp=${up}
            onPointerCancel=${() => setDrag(null)}
          >
            ${pieces.map((slot) => {
              const top = minutesInto(day, new Date(slot.startsAt));
              const bottom = minutesInto(day, new Date(slot.endsAt));
              const classes = ['slot', slot.booking.rrule ? 'series' : '', clashes(slot, props.conflicts) ? 'conflict' : '', props.openKey === slotKey(slot) ? 'open' : ''];
              return html`<button
                type="button"
                class=${classes.filter(Boolean).join(' ')}
                style=${{ top: px(top), height: px(Math.max(bottom - top, 15)) }}
                data-booking=${slot.booking.id}
                data-starts=${slot.startsAt}
                aria-label=${`${slot.booking.rrule ? 'Recurring booking' : 'Booking'}, ${formatRange(new Date(slot.startsAt), new Date(slot.endsAt))}`}
                aria-pressed=${props.openKey === slotKey(slot)}
                onClick=${() => props.onOpen(slot)}
              >${formatTime(new Date(slot.startsAt))}${slot.booking.rrule ? html` <span aria-hidden="true">↻</span>` : null}</button>`;
            })}
            ${selected
              ? html`<div class="selection" aria-hidden="true"
                  style=${{ top: px(minutesInto(day, selected.startsAt)), height: px(minutesInto(day, selected.endsAt) - minutesInto(day, selected.startsAt)) }}></div>`
              : null}
            ${dragged ? html`<div class="selection dragging" aria-hidden="true" style=${{ top: px(dragged[0]), height: px(dragged[1] - dragged[0]) }}></div>` : null}
          </div>`;
        })}
      </div>
    </div>
  </div>`;
}

/** One slot's identity across reloads: its booking and its start. */
export function slotKey(slot: WeekSlot): string {
  return `${slot.booking.id}|${slot.startsAt}`;
}

/** The minutes a drag covers: from the earlier quarter to the end of the later one; a tap is an hour. */
function dragRange(drag: Drag): [number, number] {
  if (!drag.moved) return [drag.anchor, Math.min(1440, drag.anchor + TAP_MINUTES)];
  return [Math.min(drag.anchor, drag.current), Math.max(drag.anchor, drag.current) + SNAP_MINUTES];
}
