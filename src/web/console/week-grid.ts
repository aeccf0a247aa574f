import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../browse/ui.js';
import { HoldBlock } from './holds.js';
import { addDays, atMinutes, dateKey, formatDay, formatRange, formatTime, MINUTE_MS, minutesInto } from './time.js';
import type { WeekHold, WeekSlot, WorkingRange } from './week-data.js';

/** Pixels per hour of the grid; positions are set through the CSSOM (`style` objects), which the page's CSP allows. */
const HOUR_PX = 40;
/** The grid's granularity: selections and moves land on quarter hours. */
export const SNAP_MINUTES = 15;
/** A booking follows the pointer only once it has moved this far (less is a click, which opens it). */
const MOVE_THRESHOLD_PX = 4;
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

/** A booking being dragged to a new time: where it was grabbed, and where it would land. */
interface Move {
  slot: WeekSlot;
  pointerX: number;
  pointerY: number;
  /** Minutes between the booking's start and the point grabbed. */
  grab: number;
  minutes: number;
  day: Date | null;
  start: number;
}

/** Where `day` is not working time: the complement of the working ranges, in minutes of its clock face. */
function offHours(day: Date, working: readonly WorkingRange[]): [number, number][] {
  const dayEnd = addDays(day, 1);
  const open = working
    .filter((range) => new Date(range.startsAt) < dayEnd && new Date(range.endsAt) > day)
    .map((range) => [minutesInto(day, new Date(range.startsAt)), minutesInto(day, new Date(range.endsAt))] as const);
  const off: [number, number][] = [];
  let cursor = 0;
  for (const [from, to] of open) {
    if (from > cursor) off.push([cursor, from]);
    cursor = Math.max(cursor, to);
  }
  if (cursor < 1440) off.push([cursor, 1440]);
  return off;
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
  /** The agent's working time this week; null: no rules, nothing shaded. */
  working: readonly WorkingRange[] | null;
  /** Live holds on this calendar. */
  holds: readonly WeekHold[];
  /** The id of the hold whose details are open. */
  openHold: string | null;
  onSelect: (selection: Selection) => void;
  onOpen: (slot: WeekSlot) => void;
  onOpenHold: (hold: WeekHold) => void;
  /** A booking dropped at a new time (its length kept, snapped to the grid). */
  onMove: (slot: WeekSlot, range: Selection) => void;
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

  // A booking being moved: a ref for the handlers, state to draw where it would land.
  const moving = useRef<Move | null>(null);
  const [moved, setMoveView] = useState<Move | null>(null);
  const setMove = (next: Move | null) => {
    moving.current = next;
    setMoveView(next);
  };
  /** A click that ends a move does not also open the booking. */
  const justMoved = useRef(false);

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

  const grabSlot = (slot: WeekSlot, day: Date) => (event: PointerEvent) => {
    if (event.button !== 0) return;
    const element = event.currentTarget as HTMLElement;
    element.setPointerCapture(event.pointerId);
    const column = element.parentElement!.getBoundingClientRect();
    const top = minutesInto(day, new Date(slot.startsAt));
    const grab = ((event.clientY - column.top) / HOUR_PX) * 60 - top;
    const minutes = Math.max(SNAP_MINUTES, (Date.parse(slot.endsAt) - Date.parse(slot.startsAt)) / MINUTE_MS);
    setMove({ slot, pointerX: event.clientX, pointerY: event.clientY, grab, minutes, day: null, start: top });
  };
  const dragSlot = (event: PointerEvent) => {
    const current = moving.current;
    if (!current) return;
    if (!current.day && Math.hypot(event.clientX - current.pointerX, event.clientY - current.pointerY) < MOVE_THRESHOLD_PX) return;
    // The day column under the pointer (a move may change the day), found among this grid's columns.
    const grid = (event.currentTarget as HTMLElement).closest('.week-grid')!;
    const column = [...grid.querySelectorAll<HTMLElement>('.day')].find((element) => {
      const box = element.getBoundingClientRect();
      return event.clientX >= box.left && event.clientX < box.right;
    });
    if (!column) return;
    const box = column.getBoundingClientRect();
    const raw = ((event.clientY - box.top) / HOUR_PX) * 60 - current.grab;
    const start = Math.max(0, Math.min(1440 - SNAP_MINUTES, Math.round(raw / SNAP_MINUTES) * SNAP_MINUTES));
    const day = days.find((candidate) => dateKey(candidate) === column.dataset['day'])!;
    if (!current.day || current.day.getTime() !== day.getTime() || current.start !== start) setMove({ ...current, day, start });
  };
  const dropSlot = () => {
    const current = moving.current;
    setMove(null);
    if (!current?.day) return;
    justMoved.current = true;
    const startsAt = atMinutes(current.day, current.start);
    if (startsAt.getTime() === Date.parse(current.slot.startsAt)) return;
    props.onMove(current.slot, { startsAt, endsAt: new Date(startsAt.getTime() + current.minutes * MINUTE_MS) });
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
          const landing = moved?.day && moved.day.getTime() === day.getTime() ? moved : null;
          const held = props.holds.filter((hold) => new Date(hold.startsAt) < dayEnd && new Date(hold.endsAt) > day);
          return html`<div
            class="day"
            data-day=${dateKey(day)}
            onPointerDown=${down(day)}
            onPointerMove=${move}
            onPointerUp=${up}
            onPointerCancel=${() => setDrag(null)}
          >
            ${props.working
              ? offHours(day, props.working).map(([from, to]) => html`<div class="off-hours" aria-hidden="true" style=${{ top: px(from), height: px(to - from) }}></div>`)
              : null}
            ${pieces.map((slot) => {
              const top = minutesInto(day, new Date(slot.startsAt));
              const bottom = minutesInto(day, new Date(slot.endsAt));
              const classes = [
                'slot',
                slot.booking.rrule ? 'series' : '',
                clashes(slot, props.conflicts) ? 'conflict' : '',
                props.openKey === slotKey(slot) ? 'open' : '',
                moved?.day && moved.slot === slot ? 'moving' : '',
              ];
              return html`<button
                type="button"
                class=${classes.filter(Boolean).join(' ')}
                style=${{ top: px(top), height: px(Math.max(bottom - top, 15)) }}
                data-booking=${slot.booking.id}
                data-starts=${slot.startsAt}
                aria-label=${`${slot.booking.rrule ? 'Recurring booking' : 'Booking'}, ${formatRange(new Date(slot.startsAt), new Date(slot.endsAt))}`}
                aria-pressed=${props.openKey === slotKey(slot)}
                onClick=${() => (justMoved.current ? (justMoved.current = false) : props.onOpen(slot))}
                onPointerDown=${grabSlot(slot, day)}
                onPointerMove=${dragSlot}
                onPointerUp=${dropSlot}
                onPointerCancel=${() => setMove(null)}
              >${formatTime(new Date(slot.startsAt))}${slot.booking.rrule ? html` <span aria-hidden="true">↻</span>` : null}</button>`;
            })}
            ${selected
              ? html`<div class="selection" aria-hidden="true"
                  style=${{ top: px(minutesInto(day, selected.startsAt)), height: px(minutesInto(day, selected.endsAt) - minutesInto(day, selected.startsAt)) }}></div>`
              : null}
            ${dragged ? html`<div class="selection dragging" aria-hidden="true" style=${{ top: px(dragged[0]), height: px(dragged[1] - dragged[0]) }}></div>` : null}
            ${held.map(
              (hold) => html`<${HoldBlock}
                key=${hold.id}
                hold=${hold}
                open=${props.openHold === hold.id}
                style=${{
                  top: px(minutesInto(day, new Date(hold.startsAt))),
                  height: px(Math.max(minutesInto(day, new Date(hold.endsAt)) - minutesInto(day, new Date(hold.startsAt)), 15)),
                }}
                onOpen=${() => props.onOpenHold(hold)}
              />`,
            )}
            ${landing
              ? html`<div class="slot landing" aria-hidden="true" style=${{ top: px(landing.start), height: px(Math.min(landing.minutes, 1440 - landing.start)) }}>
                  ${formatTime(atMinutes(landing.day!, landing.start))}
                </div>`
              : null}
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
