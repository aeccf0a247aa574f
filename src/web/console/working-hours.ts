import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError } from '../browse/api.js';
import { Failure, html, Loading, Notice, useLoad } from '../browse/ui.js';
import { ConsoleChildrenDocument, ConsoleClearRulesDocument, ConsoleRulesOfDocument, ConsoleSetRulesDocument, type ConsoleRulesFragment } from '../generated/console/graphql.js';
import { describeError } from './errors.js';
import {
  draftOf,
  emptyWeek,
  inputOf,
  NUMBER_FIELDS,
  OFFICE_HOURS,
  overrideId,
  placeErrors,
  WEEKDAYS,
  weeklyId,
  type Draft,
  type FormErrors,
  type Interval,
} from './rules-draft.js';
import { api } from './session.js';
import { formatDate, localZone } from './time.js';

/** Every IANA zone the browser knows, for the time zone field's suggestions. */
const ZONES: readonly string[] = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];

const input = (set: (value: string) => void) => (event: Event) => set((event.target as HTMLInputElement).value);

/** A field's error under it, tied to the input by `aria-describedby`. */
function FieldError({ id, errors }: { id: string; errors: FormErrors }) {
  return errors[id] ? html`<span class="field-error" id=${`${id}-error`} role="alert">${errors[id]}</span>` : null;
}
const invalid = (id: string, errors: FormErrors) => ({ 'aria-invalid': errors[id] ? 'true' : 'false', 'aria-describedby': errors[id] ? `${id}-error` : undefined });

/** The hours of one day (a weekday or a date): intervals, each with a remove button, and one more. */
function Hours(props: {
  label: string;
  hours: Interval[];
  /** What a day without hours is: closed, or off. */
  empty: string;
  idOf: (n: number, end: 'start' | 'end') => string;
  errors: FormErrors;
  onChange: (hours: Interval[]) => void;
}) {
  const set = (n: number, patch: Partial<Interval>) => props.onChange(props.hours.map((hours, k) => (k === n ? { ...hours, ...patch } : hours)));
  return html`<div class="hours-list">
    ${props.hours.length ? null : html`<span class="muted">${props.empty}</span>`}
    ${props.hours.map(
      (hours, n) => html`<div class="interval" data-testid="interval">
        <label class="visually-hidden" for=${props.idOf(n, 'start')}>${props.label}, interval ${n + 1}, from</label>
        <input id=${props.idOf(n, 'start')} type="time" step="900" value=${hours.start} ...${invalid(props.idOf(n, 'start'), props.errors)}
          onInput=${input((start) => set(n, { start }))} />
        <span aria-hidden="true">–</span>
        <label class="visually-hidden" for=${props.idOf(n, 'end')}>${props.label}, interval ${n + 1}, until</label>
        <input id=${props.idOf(n, 'end')} type="time" step="900" value=${hours.end} ...${invalid(props.idOf(n, 'end'), props.errors)}
          onInput=${input((end) => set(n, { end }))} />
        <button type="button" class="link" aria-label=${`Remove ${props.label}, interval ${n + 1}`} onClick=${() => props.onChange(props.hours.filter((_, k) => k !== n))}>×</button>
        <${FieldError} id=${props.idOf(n, 'start')} errors=${props.errors} />
        <${FieldError} id=${props.idOf(n, 'end')} errors=${props.errors} />
      </div>`,
    )}
    <button type="button" class="secondary small" aria-label=${`Add hours on ${props.label}`}
      onClick=${() => props.onChange([...props.hours, props.hours.length ? { start: '', end: '' } : { ...OFFICE_HOURS[0]! }])}>+ hours</button>
  </div>`;
}

/** A whole number (or empty for none) with its unit and its error. */
function NumberField(props: { id: string; label: string; unit: string; hint?: string; value: string; errors: FormErrors; onInput: (value: string) => void }) {
  return html`<div class="number-field">
    <label for=${props.id}>${props.label}</label>
    <span class="with-unit">
      <input id=${props.id} type="number" inputmode="numeric" step="1" value=${props.value} ...${invalid(props.id, props.errors)} onInput=${input(props.onInput)} />
      <span class="muted">${props.unit}</span>
    </span>
    ${props.hint ? html`<span class="hint">${props.hint}</span>` : null}
    <${FieldError} id=${props.id} errors=${props.errors} />
  </div>`;
}

/**
 * One agent's availability rules: loaded, edited, saved whole (`setAvailabilityRules`) or cleared. The server
 * validates; its errors name fields (`weeklyHours[3].end`), each shown under the input it names.
 */
function RulesEditor({ agentId, self }: { agentId: string; self: boolean }) {
  const target = self ? null : agentId;
  const [load, setLoaded, retry] = useLoad(() => api(ConsoleRulesOfDocument, { agentId: target }), `rules-${agentId}`);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [errors, setErrors] = useState<FormErrors>({});
  const [state, setState] = useState<{ kind: 'idle' | 'saving' | 'confirm-clear' } | { kind: 'done'; text: string } | { kind: 'error'; text: string }>({ kind: 'idle' });

  const saved: ConsoleRulesFragment | null = load.status === 'ready' ? load.data.availabilityRules ?? null : null;
  useEffect(() => {
    if (load.status === 'ready') setDraft(draftOf(load.data.availabilityRules ?? null, localZone()));
  }, [load.status === 'ready' ? load.data : null]);

  if (load.status === 'loading' || (load.status === 'ready' && !draft)) return html`<${Loading} label="Loading the rules…" />`;
  if (load.status === 'error') return html`<${Failure} message=${load.message} retry=${load.retry} />`;
  const form = draft!;
  const change = (patch: Partial<Draft>) => setDraft({ ...form, ...patch });

  const save = async (event: Event) => {
    event.preventDefault();
    const { input: rules, fieldOf, problems } = inputOf(form);
    setErrors(problems);
    if (Object.keys(problems).length) return setState({ kind: 'error', text: 'Some fields need a look: see the messages under them.' });
    setState({ kind: 'saving' });
    try {
      const { setAvailabilityRules } = await api(ConsoleSetRulesDocument, { agentId: target, input: rules });
      setLoaded({ availabilityRules: setAvailabilityRules });
      setState({ kind: 'done', text: 'Saved. Others now see this calendar through these rules.' });
    } catch (failure) {
      if (failure instanceof ApiError && Object.keys(failure.fields).length) {
        const placed = placeErrors(failure.fields, fieldOf);
        setErrors(placed.errors);
        setState({ kind: 'error', text: ['Not saved: see the messages under the fields.', ...placed.unplaced].join(' ') });
      } else setState({ kind: 'error', text: describeError(failure) });
    }
  };
  const clear = async () => {
    setState({ kind: 'saving' });
    try {
      await api(ConsoleClearRulesDocument, { agentId: target });
      setErrors({});
      setLoaded({ availabilityRules: null });
      setState({ kind: 'done', text: 'Rules cleared: the calendar is open at every hour again.' });
    } catch (failure) {
      setState({ kind: 'error', text: describeError(failure) });
    }
  };

  return html`<form class="panel rules-form" onSubmit=${save} aria-labelledby="rules-title" noValidate data-testid="rules-form">
    <div class="panel-head">
      <h2 id="rules-title">Working hours and limits</h2>
      <span class="muted" data-testid="rules-status">${saved ? `Saved ${formatDate(new Date(saved.updatedAt))}` : 'No rules: every hour is open'}</span>
    </div>
    <p class="hint">What others may take from this calendar: availability, proposals and holds respect these rules; buffers apply to every booking.</p>

    <label for="wh-zone">Time zone <small>(IANA, e.g. Europe/Berlin)</small></label>
    <input id="wh-zone" list="wh-zones" autocomplete="off" spellcheck=${false} value=${form.timeZone} ...${invalid('wh-zone', errors)} onInput=${input((timeZone) => change({ timeZone }))} />
    <datalist id="wh-zones">${ZONES.map((zone) => html`<option value=${zone}></option>`)}</datalist>
    <${FieldError} id="wh-zone" errors=${errors} />

    <fieldset class="weekly" id="wh-weekly" tabindex="-1">
      <legend>Weekly hours</legend>
      <label class="check"><input type="checkbox" checked=${form.weekly !== null}
        onChange=${(e: Event) => change({ weekly: (e.target as HTMLInputElement).checked ? emptyWeek() : null })} /> Only these hours are open (unchecked: every hour of every day)</label>
      <${FieldError} id="wh-weekly" errors=${errors} />
      ${form.weekly
        ? html`<p class="hint">Several intervals a day are fine; an end of 00:00 is midnight. A day with no hours is closed.</p>
            ${WEEKDAYS.map(
              ({ day, label }) => html`<div class="day-hours" data-day=${day}>
                <span class="day-name">${label}</span>
                <${Hours} label=${label} empty="Closed" hours=${form.weekly![day]} idOf=${(n: number, end: 'start' | 'end') => weeklyId(day, n, end)} errors=${errors}
                  onChange=${(hours: Interval[]) => change({ weekly: { ...form.weekly!, [day]: hours } })} />
              </div>`,
            )}`
        : null}
    </fieldset>

    <fieldset class="overrides" id="wh-overrides" tabindex="-1">
      <legend>Dates that differ</legend>
      <${FieldError} id="wh-overrides" errors=${errors} />
      ${form.overrides.length ? null : html`<p class="hint">A day off, or other hours on one date.</p>`}
      ${form.overrides.map((override, index) => {
        const set = (patch: Partial<typeof override>) => change({ overrides: form.overrides.map((other, k) => (k === index ? { ...other, ...patch } : other)) });
        const name = override.date || `date ${index + 1}`;
        return html`<div class="day-hours override" data-testid="override">
          <span class="day-name">
            <label class="visually-hidden" for=${overrideId(index, 'date')}>Date ${index + 1}</label>
            <input id=${overrideId(index, 'date')} type="date" value=${override.date} ...${invalid(overrideId(index, 'date'), errors)} onInput=${input((date) => set({ date }))} />
            <button type="button" class="link" aria-label=${`Remove ${name}`} onClick=${() => change({ overrides: form.overrides.filter((_, k) => k !== index) })}>×</button>
            <${FieldError} id=${overrideId(index, 'date')} errors=${errors} />
          </span>
          <${Hours} label=${name} empty="Day off" hours=${override.hours} idOf=${(n: number, end: 'start' | 'end') => overrideId(index, `${n}-${end}`)} errors=${errors}
            onChange=${(hours: Interval[]) => set({ hours })} />
        </div>`;
      })}
      <div class="actions"><button type="button" class="secondary small" onClick=${() => change({ overrides: [...form.overrides, { date: '', hours: [] }] })}>+ date</button></div>
    </fieldset>

    <fieldset class="numbers">
      <legend>Buffers, notice and limits</legend>
      <${NumberField} id=${NUMBER_FIELDS.bufferBeforeMinutes} label="Buffer before" unit="minutes" value=${form.bufferBefore} errors=${errors} onInput=${(bufferBefore: string) => change({ bufferBefore })} />
      <${NumberField} id=${NUMBER_FIELDS.bufferAfterMinutes} label="Buffer after" unit="minutes" value=${form.bufferAfter} errors=${errors} onInput=${(bufferAfter: string) => change({ bufferAfter })} />
      <${NumberField} id=${NUMBER_FIELDS.minimumNoticeMinutes} label="Minimum notice" unit="minutes" value=${form.notice} errors=${errors} onInput=${(notice: string) => change({ notice })} />
      <${NumberField} id=${NUMBER_FIELDS.maximumAdvanceDays} label="Maximum advance" unit="days" hint="Empty: no bound." value=${form.advance} errors=${errors} onInput=${(advance: string) => change({ advance })} />
      <${NumberField} id=${NUMBER_FIELDS.dailyLimit} label="Daily limit" unit="bookings a day" hint="Empty: none." value=${form.dailyLimit} errors=${errors} onInput=${(dailyLimit: string) => change({ dailyLimit })} />
      <${NumberField} id=${NUMBER_FIELDS.weeklyLimit} label="Weekly limit" unit="bookings a week" hint="Empty: none." value=${form.weeklyLimit} errors=${errors} onInput=${(weeklyLimit: string) => change({ weeklyLimit })} />
    </fieldset>
    <label class="check"><input id="wh-enforce" type="checkbox" checked=${form.enforce} onChange=${(e: Event) => change({ enforce: (e.target as HTMLInputElement).checked })} />
      Apply these rules to this agent’s own bookings too</label>

    ${state.kind === 'error' ? html`<p class="field-error" role="alert" data-testid="rules-error">${state.text}</p>` : null}
    ${state.kind === 'done' ? html`<p class="good" role="status">${state.text}</p>` : null}
    <div class="actions">
      <button type="submit" disabled=${state.kind === 'saving'}>${state.kind === 'saving' ? 'Saving…' : 'Save rules'}</button>
      ${state.kind === 'confirm-clear'
        ? html`<span class="confirm">
            <span>Remove every rule?</span>
            <button type="button" class="danger" onClick=${clear}>Yes, clear</button>
            <button type="button" class="secondary" onClick=${() => setState({ kind: 'idle' })}>Keep them</button>
          </span>`
        : html`<button type="button" class="secondary danger" disabled=${!saved || state.kind === 'saving'} onClick=${() => setState({ kind: 'confirm-clear' })}>Clear rules</button>`}
      <button type="button" class="secondary" onClick=${retry}>Reload</button>
    </div>
  </form>`;
}

/** The working-hours tab: the rules of this agent or of one of its children (a parent sets its children's). */
export function WorkingHoursView({ me }: { me: { id: string; name: string } }) {
  const [children] = useLoad(() => api(ConsoleChildrenDocument), 'children');
  const [agentId, setAgentId] = useState(me.id);
  const agents = useMemo(
    () => [{ id: me.id, name: `${me.name} (this agent)` }, ...(children.status === 'ready' ? children.data.me.children : [])],
    [children.status === 'ready' ? children.data : null],
  );
  return html`<div class="stack">
    ${agents.length > 1
      ? html`<div class="panel form-grid">
          <label for="wh-agent">Rules of</label>
          <select id="wh-agent" value=${agentId} onChange=${(e: Event) => setAgentId((e.target as HTMLSelectElement).value)}>
            ${agents.map((agent) => html`<option value=${agent.id}>${agent.name}</option>`)}
          </select>
        </div>`
      : null}
    ${children.status === 'error' ? html`<${Notice} kind="error">${children.message}<//>` : null}
    <${RulesEditor} key=${agentId} agentId=${agentId} self=${agentId === me.id} />
  </div>`;
}
