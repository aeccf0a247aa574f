import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { WeekSlotsDocument, type WeekSlotsQuery } from '../generated/console/graphql.js';
import { describeError } from './errors.js';
import { api } from './session.js';
import { addDays } from './time.js';
import { needsReload, withEvents, type LiveEvent, type WeekSlot } from './week-events.js';

export type { WeekSlot } from './week-events.js';
/** A live hold of this agent, as the grid draws it. */
export type WeekHold = WeekSlotsQuery['holds'][number];
/** A stretch of working time (instants); the week's list is null when the agent has no rules (all time works). */
export type WorkingRange = NonNullable<WeekSlotsQuery['workingTime']>[number];

export interface Week {
  slots: WeekSlot[];
  working: WorkingRange[] | null;
  holds: WeekHold[];
}
export type WeekData = { status: 'loading' } | { status: 'error'; message: string } | ({ status: 'ready' } & Week);

/**
 * The week starting at `weekStart`: its slots, kept current by live events (a single booking's creation,
 * move or any cancellation is applied in place; an event whose slots it does not spell out, such as a new
 * series or an occurrence leaving its series, reloads the week), the working time its rules leave, and the
 * agent's live holds (a hold makes no event until it is confirmed, whose booking.created takes it off the grid;
 * the page reloads after its own hold actions).
 */
export function useWeekSlots(weekStart: Date): { data: WeekData; reload: () => void; apply: (event: LiveEvent) => void } {
  const [data, setData] = useState<WeekData>({ status: 'loading' });
  const [version, setVersion] = useState(0);
  const loadedWeek = useRef<number | undefined>(undefined);
  /** Events applied in place since the load in flight was asked for (its answer may predate them); undefined: none in flight. */
  const appliedDuringLoad = useRef<LiveEvent[] | undefined>(undefined);
  const from = weekStart.getTime();

  useEffect(() => {
    let live = true;
    appliedDuringLoad.current = [];
    // Another week shows "loading"; a reload of this one keeps its slots on screen until the answer.
    setData((current) => (current.status === 'ready' && loadedWeek.current === from ? current : { status: 'loading' }));
    api(WeekSlotsDocument, { from: weekStart.toISOString(), to: addDays(weekStart, 7).toISOString() }).then(
      ({ bookedSlots, workingTime, holds }) => {
        if (!live) return;
        loadedWeek.current = from;
        const answered = { slots: bookedSlots, working: workingTime ?? null, holds: holds.filter((hold) => hold.status === 'held') };
        setData({ status: 'ready', ...withEvents(answered, appliedDuringLoad.current ?? [], weekStart) });
        appliedDuringLoad.current = undefined;
      },
      (error: unknown) => {
        if (!live) return;
        appliedDuringLoad.current = undefined;
        setData({ status: 'error', message: describeError(error) });
      },
    );
    return () => {
      live = false;
    };
  }, [from, version]);

  const reload = useCallback(() => setVersion((n) => n + 1), []);
  const apply = useCallback(
    (event: LiveEvent) => {
      if (needsReload(event)) reload();
      else {
        appliedDuringLoad.current?.push(event);
        setData((current) => (current.status === 'ready' ? withEvents(current, [event], weekStart) : current));
      }
    },
    [from],
  );
  return { data, reload, apply };
}
