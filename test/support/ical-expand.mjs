/**
 * A worker thread that reads an iCalendar feed as a calendar app built on ical.js (Mozilla's, as in
 * Thunderbird) does: the VTIMEZONEs the feed carries, each series' RRULE, EXDATEs and RECURRENCE-ID
 * overrides (related by UID), cancelled events left out. In a worker so that a rule ical.js loops on
 * fails the test instead of hanging it.
 *
 * Message in: { ics, from, before, maxSteps } (times in ms). Message out: { occurrences } mapping each
 * UID to its [startsAt, endsAt] ISO pairs starting in [from, before), chronological; or { error }.
 */
import { parentPort } from 'node:worker_threads';
import ICAL from 'ical.js';

function expand({ ics, from, before, maxSteps }) {
  const calendar = new ICAL.Component(ICAL.parse(ics));
  for (const vtimezone of calendar.getAllSubcomponents('vtimezone')) ICAL.TimezoneService.register(new ICAL.Timezone(vtimezone));
  const byUid = new Map();
  for (const vevent of calendar.getAllSubcomponents('vevent')) {
    const uid = vevent.getFirstPropertyValue('uid');
    const entry = byUid.get(uid) ?? { masters: [], exceptions: [] };
    (vevent.hasProperty('recurrence-id') ? entry.exceptions : entry.masters).push(vevent);
    byUid.set(uid, entry);
  }
  const occurrences = {};
  for (const [uid, { masters, exceptions }] of byUid) {
    const found = [];
    for (const master of masters) {
      if (master.getFirstPropertyValue('status') === 'CANCELLED') continue;
      const event = new ICAL.Event(master, { exceptions, strictExceptions: true });
      const iterator = event.iterator();
      let steps = 0;
      for (let next = iterator.next(); next; next = iterator.next()) {
        if (++steps > maxSteps) throw new Error(`${uid}: more than ${maxSteps} occurrences before ${new Date(before).toISOString()}`);
        // An override moves an occurrence by an hour at most: a day past the window, nothing comes back into it.
        if (next.toJSDate().getTime() >= before + 86_400_000) break;
        const details = event.getOccurrenceDetails(next);
        if (details.item.component.getFirstPropertyValue('status') === 'CANCELLED') continue;
        const startsAt = details.startDate.toJSDate();
        if (startsAt.getTime() >= from && startsAt.getTime() < before) found.push([startsAt.toISOString(), details.endDate.toJSDate().toISOString()]);
      }
    }
    occurrences[uid] = found.sort((a, b) => a[0].localeCompare(b[0]));
  }
  return occurrences;
}

parentPort.on('message', (request) => {
  try {
    parentPort.postMessage({ occurrences: expand(request) });
  } catch (error) {
    parentPort.postMessage({ error: error instanceof Error ? error.stack : String(error) });
  }
});
