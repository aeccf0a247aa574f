import { useEffect, useState } from 'preact/hooks';
import { Failure, html, Loading, Notice, useLoad } from '../browse/ui.js';
import {
  AcceptConsoleProposalDocument,
  ConsoleProposalsDocument,
  DeclineConsoleProposalDocument,
  ProposeSlotDocument,
  RejectConsoleProposalDocument,
  WithdrawConsoleProposalDocument,
  type ConsoleProposalFragment,
} from '../generated/console/graphql.js';
import { describeError } from './errors.js';
import type { LiveHub } from './live.js';
import { api } from './session.js';
import { formatRange, fromLocalInput } from './time.js';

type Role = 'incoming' | 'outgoing';
type Action = 'accept' | 'reject' | 'decline' | 'withdraw';

const ACTIONS: Record<Action, { label: string; run: (id: string) => Promise<unknown>; done: string }> = {
  accept: { label: 'Accept', run: (id) => api(AcceptConsoleProposalDocument, { id }), done: 'Accepted: the slot moved to the proposer.' },
  reject: { label: 'Reject', run: (id) => api(RejectConsoleProposalDocument, { id }), done: 'Rejected: you keep the slot and the proposal stays open.' },
  decline: { label: 'Decline', run: (id) => api(DeclineConsoleProposalDocument, { id }), done: 'Declined for good.' },
  withdraw: { label: 'Withdraw', run: (id) => api(WithdrawConsoleProposalDocument, { id }), done: 'Withdrawn.' },
};

/** Proposals this agent received (accept, reject, decline) and made (withdraw), and a form to make one. */
export function ProposalsView({ agentId, hub }: { agentId: string; hub: LiveHub }) {
  const [incoming, , reloadIncoming] = useLoad(() => api(ConsoleProposalsDocument, { role: 'incoming' }), 'incoming');
  const [outgoing, , reloadOutgoing] = useLoad(() => api(ConsoleProposalsDocument, { role: 'outgoing' }), 'outgoing');
  const [notice, setNotice] = useState<{ kind: 'info' | 'error'; text: string } | null>(null);
  const reload = () => {
    reloadIncoming();
    reloadOutgoing();
  };
  // An accept moves bookings: the events say so, and the lists follow.
  useEffect(() => hub.listen((signal) => signal.kind === 'gap' || signal.event.type !== 'booking.reminder' ? reload() : undefined), []);

  const act = async (action: Action, proposal: ConsoleProposalFragment) => {
    try {
      await ACTIONS[action].run(proposal.id);
      setNotice({ kind: 'info', text: ACTIONS[action].done });
    } catch (failure) {
      setNotice({ kind: 'error', text: describeError(failure) });
    }
    reload();
  };

  const list = (role: Role, load: typeof incoming) => html`<section class="panel" aria-labelledby=${`${role}-title`}>
    <div class="panel-head">
      <h2 id=${`${role}-title`}>${role === 'incoming' ? 'Proposals to this agent' : 'Proposals by this agent'}</h2>
      <button type="button" class="secondary" onClick=${reload}>Refresh<span class="visually-hidden"> ${role} proposals</span></button>
    </div>
    ${load.status === 'loading' ? html`<${Loading} label="Loading proposals…" />` : null}
    ${load.status === 'error' ? html`<${Failure} message=${load.message} retry=${load.retry} />` : null}
    ${load.status === 'ready'
      ? load.data.proposals.length
        ? html`<ul class="rows">${load.data.proposals.map((proposal) => html`<${ProposalRow} key=${proposal.id} proposal=${proposal} role=${role} onAct=${act} />`)}</ul>`
        : html`<p class="empty">None yet.</p>`
      : null}
  </section>`;

  return html`<div class="stack">
    ${notice ? html`<${Notice} kind=${notice.kind} onClose=${() => setNotice(null)}>${notice.text}<//>` : null}
    <${ProposeForm} agentId=${agentId} onProposed=${() => (setNotice({ kind: 'info', text: 'Proposal sent.' }), reload())} />
    ${list('incoming', incoming)} ${list('outgoing', outgoing)}
  </div>`;
}

function ProposalRow({ proposal, role, onAct }: { proposal: ConsoleProposalFragment; role: Role; onAct: (action: Action, proposal: ConsoleProposalFragment) => Promise<void> }) {
  const [busy, setBusy] = useState(false);
  const other = role === 'incoming' ? proposal.proposer : proposal.target;
  const actions: Action[] = proposal.status !== 'pending' ? [] : role === 'incoming' ? ['accept', 'reject', 'decline'] : ['withdraw'];
  const when = formatRange(new Date(proposal.startsAt), new Date(proposal.endsAt));
  return html`<li class="row" data-testid="proposal">
    <div class="row-main">
      <strong>${when}</strong>
      <span class="muted">${role === 'incoming' ? 'from' : 'to'} ${other.name} <code>${other.id}</code></span>
    </div>
    <span class=${`badge status-${proposal.status}`}>${proposal.status}</span>
    ${actions.length
      ? html`<div class="actions">
          ${actions.map(
            (action) => html`<button type="button" class=${action === 'accept' ? '' : 'secondary'} disabled=${busy}
              aria-label=${`${ACTIONS[action].label} the proposal for ${when}`}
              onClick=${async () => {
                setBusy(true);
                await onAct(action, proposal);
                setBusy(false);
              }}>${ACTIONS[action].label}</button>`,
          )}
        </div>`
      : null}
  </li>`;
}

function ProposeForm({ agentId, onProposed }: { agentId: string; onProposed: () => void }) {
  const [target, setTarget] = useState('');
  const [start, setStart] = useState('');
  const [end, setEnd] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    const startsAt = fromLocalInput(start);
    const endsAt = fromLocalInput(end);
    if (!target.trim() || !startsAt || !endsAt) return setError('Give the other agent’s id, a start and an end.');
    if (endsAt <= startsAt) return setError('The end must be after the start.');
    if (target.trim() === agentId) return setError('Propose to another agent, not to this one.');
    setBusy(true);
    setError(null);
    try {
      await api(ProposeSlotDocument, { input: { targetAgentId: target.trim(), startsAt: startsAt.toISOString(), endsAt: endsAt.toISOString() } });
      setTarget('');
      setStart('');
      setEnd('');
      onProposed();
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setBusy(false);
    }
  };

  return html`<form class="panel form-grid" onSubmit=${submit} aria-labelledby="propose-title" noValidate>
    <h2 id="propose-title">Ask another agent for a slot</h2>
    <label for="pp-target">Agent id</label>
    <input id="pp-target" value=${target} autocomplete="off" spellcheck=${false} onInput=${(e: Event) => setTarget((e.target as HTMLInputElement).value)} />
    <label for="pp-start">Start</label>
    <input id="pp-start" type="datetime-local" step="900" value=${start} onInput=${(e: Event) => setStart((e.target as HTMLInputElement).value)} />
    <label for="pp-end">End</label>
    <input id="pp-end" type="datetime-local" step="900" value=${end} onInput=${(e: Event) => setEnd((e.target as HTMLInputElement).value)} />
    ${error ? html`<p class="field-error" role="alert">${error}</p>` : null}
    <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Sending…' : 'Propose'}</button></div>
  </form>`;
}
