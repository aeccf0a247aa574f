import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { WeekSlotsDocument } from '../generated/console/graphql.js';
import { describeError } from './errors.js';
import { api } from './session.js';
import { addDays } from './time.js';
import { applyEvent, needsReload, type LiveEvent, type WeekSlot } from './week-events.js';

export type { WeekSlot } from './week-events.js';
export type WeekData = { status: 'loading' } | { status: 'error'; message: string } | { status: 'ready'; slots: WeekSlot[] };

/**
 * The slots of the week starting at `weekStart`, kept current by live events: a single booking's
 * creation or any cancellation is applied in place; an event whose slots it does not spell out (a new
 * series, a transfer that took one occurrence out of a series) reloads the week.
 */
export function useWeekSlots(weekStart: Date): { data: WeekData; reload: () => void; apply: (event: LiveEvent) => void } {
  const [data, setData] = useState<WeekData>({ status: 'loading' });
  const [version, setVersion] = useState(0);
  const loadedWeek = useRef<number | undefined>(undefined);
  const from = weekStart.getTime();

  useEffect(() => {
    let live = true;
    // Another week shows "loading"; a reload of this one keeps its slots on screen until the answer.
    setData((current) => (current.status === 'ready' && loadedWeek.current === from ? current : { status: 'loading' }));
    api(WeekSlotsDocument, { from: weekStart.toISOString(), to: addDays(weekStart, 7).toISOString() }).then(
      ({ bookedSlots }) => {
        if (!live) return;
        loadedWeek.current = from;
        setData({ status: 'ready', slots: bookedSlots });
      },
      (error: unknown) => live && setData({ status: 'error', message: describeError(error) }),
    );
    return () => {
      live = false;
    };
  }, [from, version]);

  const reload = useCallback(() => setVersion((n) => n + 1), []);
  const apply = useCallback(
    (event: LiveEvent) => {
      if (needsReload(event)) reload();
      else setData((current) => (current.status === 'ready' ? { status: 'ready', slots: applyEvent(current.slots, event, weekStart) } : current));
    },
    [from],
  );
  return { data, reload, apply };
}
