/** Series rules the console writes (a few common repeats) and reads back in words. */
import { icalLocal, localZone } from './time.js';

export type Repeat = 'none' | 'daily' | 'weekdays' | 'weekly';

const RULES: Record<Exclude<Repeat, 'none'>, string> = {
  daily: 'FREQ=DAILY',
  weekdays: 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR',
  weekly: 'FREQ=WEEKLY',
};

/** A series keeps its local wall-clock time across daylight-saving changes: its rule names this browser's zone. */
export function ruleFor(repeat: Repeat, count: number, startsAt: Date): string | null {
  if (repeat === 'none') return null;
  return `DTSTART;TZID=${localZone()}:${icalLocal(startsAt)}\nRRULE:${RULES[repeat]};COUNT=${count}`;
}

const FREQUENCIES: Record<string, string> = { DAILY: 'every day', WEEKLY: 'every week', MONTHLY: 'every month', YEARLY: 'every year', HOURLY: 'every hour' };
const WEEKDAYS: Record<string, string> = { MO: 'Mon', TU: 'Tue', WE: 'Wed', TH: 'Thu', FR: 'Fri', SA: 'Sat', SU: 'Sun' };

/** `every week on Mon, Fri, 10 times`; the rule itself when it says more than that. */
export function describeRule(rrule: string): string {
  const rule = rrule.split('\n').find((line) => !line.startsWith('DTSTART')) ?? '';
  const parts = new Map(rule.replace(/^RRULE:/, '').split(';').map((part) => part.split('=') as [string, string]));
  const frequency = FREQUENCIES[parts.get('FREQ') ?? ''];
  const known = new Set(['FREQ', 'COUNT', 'BYDAY', 'INTERVAL', 'UNTIL']);
  if (!frequency || [...parts.keys()].some((key) => !known.has(key)) || (parts.get('INTERVAL') ?? '1') !== '1') return rule;
  const days = parts.get('BYDAY')?.split(',').map((day) => WEEKDAYS[day] ?? day).join(', ');
  const count = parts.get('COUNT');
  const until = parts.get('UNTIL');
  return [frequency + (days ? ` on ${days}` : ''), count ? `${count} times` : '', until ? `until ${until.slice(0, 8)}` : ''].filter(Boolean).join(', ');
}

