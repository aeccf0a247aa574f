import { useState } from 'preact/hooks';
import { html, Notice } from '../browse/ui.js';
import { ApiError } from '../browse/api.js';
import {
  ConsoleAvailabilityDocument,
  ConsoleProposeFirstAvailableDocument,
  ConsoleSetVisibilityDocument,
  ProposeSlotDocument,
  type ConsoleAvailabilityQuery,
  type FreeBusyVisibility,
} from '../generated/console/graphql.js';
import { describeError } from './errors.js';
import { api } from './session.js';
import { addDays, formatRange, fromLocalInput, startOfWeek, toLocalInput } from './time.js';

type Slot = ConsoleAvailabilityQuery['availability']['edges'][number]['node'];

const VISIBILITY: { value: FreeBusyVisibility; label: string }[] = [
  { value: 'family', label: 'Family: this agent, its parent and its children' },
  { value: 'anyone', label: 'Anyone: every agent' },
  { value: 'nobody', label: 'Nobody but this agent' },
];

/** `forbidden` here means the other calendar is not shared (or no such agent): said without guessing which. */
function availabilityError(failure: unknown): string {
  if (failure instanceof ApiError && failure.code === 'forbidden') return 'An agent asked about does not share its free/busy with this one, or does not exist.';
  if (failure instanceof ApiError && failure.code === 'conflict') return 'No common free slot in that window.';
  if (failure instanceof ApiError && failure.code === 'slot_taken') return 'That slot was just taken: ask again for the next one.';
  return describeError(failure);
}

/** Common free time with other agents, proposing a slot (or the first one), and who may see this agent's free/busy. */
export function AvailabilityView({ visibility, onVisibility }: { visibility: FreeBusyVisibility | null; onVisibility: (visibility: FreeBusyVisibility) => void }) {
  const monday = addDays(startOfWeek(new Date()), 7);
  const [others, setOthers] = useState('');
  const [duration, setDuration] = useState('30');
  const [granularity, setGranularity] = useState('15');
  const [from, setFrom] = useState(toLocalInput(new Date(monday.getTime() + 8 * 3_600_000)));
  const [to, setTo] = useState(toLocalInput(new Date(addDays(monday, 5).getTime() + 18 * 3_600_000)));
  const [slots, setSlots] = useState<{ items: Slot[]; next: string | null } | null>(null);
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<{ kind: 'info' | 'error'; text: string } | null>(null);

  const agentIds = others.split(/[\s,]+/).filter(Boolean);
  const question = () => {
    const start = fromLocalInput(from);
    const end = fromLocalInput(to);
    if (!agentIds.length || !start || !end) throw new Error('Give at least one agent id, a start and an end.');
    return { agentIds, duration: Number(duration), granularity: Number(granularity), from: start.toISOString(), to: end.toISOString() };
  };
  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    setNotice(null);
    try {
      await action();
    } catch (failure) {
      setNotice({ kind: 'error', text: availabilityError(failure) });
    } finally {
      setBusy(false);
    }
  };
  const find = (after: string | null) =>
    run(async () => {
      const { availability } = await api(ConsoleAvailabilityDocument, { ...question(), after });
      const items = availability.edges.map((edge) => edge.node);
      setSlots({ items: after && slots ? [...slots.items, ...items] : items, next: availability.pageInfo.hasNextPage ? availability.pageInfo.endCursor : null });
    });
  const propose = (slot: Slot) =>
    run(async () => {
      await api(ProposeSlotDocument, { input: { targetAgentId: agentIds[0]!, startsAt: slot.startsAt, endsAt: slot.endsAt } });
      setNotice({ kind: 'info', text: `Proposed ${formatRange(new Date(slot.startsAt), new Date(slot.endsAt))}.` });
    });
  const proposeFirst = () =>
    run(async () => {
      const { agentIds: [target], ...span } = question();
      const { proposeFirstAvailable } = await api(ConsoleProposeFirstAvailableDocument, { input: { targetAgentId: target!, ...span } });
      setNotice({ kind: 'info', text: `Proposed the first common slot: ${formatRange(new Date(proposeFirstAvailable.startsAt), new Date(proposeFirstAvailable.endsAt))}.` });
    });
  const submit = (event: Event) => {
    event.preventDefault();
    void find(null);
  };

  return html`<div class="stack">
    ${notice ? html`<${Notice} kind=${notice.kind} onClose=${() => setNotice(null)}>${notice.text}<//>` : null}
    <form class="panel form-grid" onSubmit=${submit} aria-labelledby="availability-title" noValidate>
      <h2 id="availability-title">Free time with other agents</h2>
      <p class="hint">The slots free on this calendar and theirs. Only free/busy is shared, never a booking.</p>
      <label for="av-agents">Agent ids <small>(one or more, separated by commas)</small></label>
      <input id="av-agents" autocomplete="off" spellcheck=${false} value=${others} onInput=${(e: Event) => setOthers((e.target as HTMLInputElement).value)} />
      <label for="av-from">From</label>
      <input id="av-from" type="datetime-local" step="900" value=${from} onInput=${(e: Event) => setFrom((e.target as HTMLInputElement).value)} />
      <label for="av-to">To</label>
      <input id="av-to" type="datetime-local" step="900" value=${to} onInput=${(e: Event) => setTo((e.target as HTMLInputElement).value)} />
      <label for="av-duration">Duration (minutes)</label>
      <input id="av-duration" type="number" min="5" max="1440" step="5" value=${duration} onInput=${(e: Event) => setDuration((e.target as HTMLInputElement).value)} />
      <label for="av-granularity">Start every</label>
      <select id="av-granularity" value=${granularity} onChange=${(e: Event) => setGranularity((e.target as HTMLSelectElement).value)}>
        ${['5', '10', '15', '30', '60'].map((minutes) => html`<option value=${minutes}>${minutes} minutes</option>`)}
      </select>
      <div class="actions">
        <button type="submit" disabled=${busy}>Find free slots</button>
        <button type="button" class="secondary" disabled=${busy || agentIds.length !== 1} onClick=${proposeFirst}>Propose the first available</button>
      </div>
    </form>
    ${slots
      ? html`<section class="panel" aria-labelledby="slots-title">
          <h2 id="slots-title">Common free slots</h2>
          ${slots.items.length
            ? html`<ul class="rows">
                ${slots.items.map(
                  (slot) => html`<li class="row" data-testid="free-slot">
                    <strong>${formatRange(new Date(slot.startsAt), new Date(slot.endsAt))}</strong>
                    ${agentIds.length === 1
                      ? html`<button type="button" class="secondary" disabled=${busy} aria-label=${`Propose ${formatRange(new Date(slot.startsAt), new Date(slot.endsAt))}`}
                          onClick=${() => propose(slot)}>Propose</button>`
                      : null}
                  </li>`,
                )}
              </ul>`
            : html`<p class="empty">No common free slot in that window.</p>`}
          ${slots.next ? html`<div class="actions"><button type="button" class="secondary" disabled=${busy} onClick=${() => find(slots.next)}>More slots</button></div>` : null}
        </section>`
      : null}
    <${VisibilityForm} visibility=${visibility} onVisibility=${onVisibility} />
  </div>`;
}

function VisibilityForm({ visibility, onVisibility }: { visibility: FreeBusyVisibility | null; onVisibility: (visibility: FreeBusyVisibility) => void }) {
  const [choice, setChoice] = useState<FreeBusyVisibility>(visibility ?? 'family');
  const [state, setState] = useState<{ kind: 'idle' | 'saving' | 'saved' } | { kind: 'error'; message: string }>({ kind: 'idle' });
  const save = async (event: Event) => {
    event.preventDefault();
    setState({ kind: 'saving' });
    try {
      const { setFreeBusyVisibility } = await api(ConsoleSetVisibilityDocument, { visibility: choice });
      if (setFreeBusyVisibility.freeBusyVisibility) onVisibility(setFreeBusyVisibility.freeBusyVisibility);
      setState({ kind: 'saved' });
    } catch (failure) {
      setState({ kind: 'error', message: describeError(failure) });
    }
  };
  return html`<form class="panel" onSubmit=${save} aria-labelledby="visibility-title">
    <h2 id="visibility-title">Who may see this agent’s free/busy</h2>
    <fieldset>
      <legend class="visually-hidden">Free/busy visibility</legend>
      ${VISIBILITY.map(
        (option) => html`<label class="check"><input type="radio" name="visibility" value=${option.value} checked=${choice === option.value}
          onChange=${() => setChoice(option.value)} /> ${option.label}</label>`,
      )}
    </fieldset>
    <div class="actions">
      <button type="submit" disabled=${state.kind === 'saving'}>Save</button>
      <span role="status">${state.kind === 'saved' ? 'Saved.' : ''}</span>
      ${state.kind === 'error' ? html`<span class="field-error" role="alert">${state.message}</span>` : null}
    </div>
  </form>`;
}
