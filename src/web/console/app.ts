import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, requestAs } from '../browse/api.js';
import { useTabBar } from '../browse/scroll-cue.js';
import { html, Loading, Notice } from '../browse/ui.js';
import { ConsoleMeDocument, type ConsoleMeQuery } from '../generated/console/graphql.js';
import { AgentsView } from './agents.js';
import { AvailabilityView } from './availability.js';
import { CalendarView } from './calendar.js';
import { describeError } from './errors.js';
import { FeedsView } from './feeds.js';
import { LiveHub, startLive, type LiveEvent, type LiveState } from './live.js';
import { ProposalsView } from './proposals.js';
import { api, forgetAgentToken, keepAgentToken, storedAgentToken, whenTokenRejected } from './session.js';
import { dateKey, formatRange, formatTime, weekFromKey } from './time.js';
import { readState, VIEWS, writeState, type ConsoleState, type View } from './url-state.js';
import { WebhooksView } from './webhooks.js';
import { WorkingHoursView } from './working-hours.js';

type Me = ConsoleMeQuery['me'];
type PageNotice = { kind: 'info' | 'error'; text: string };

const LIVE_LABELS: Record<LiveState, string> = {
  connecting: 'Connecting…',
  connected: 'Live',
  reconnecting: 'Reconnecting…',
  offline: 'Offline',
};

function SignIn({ onSignedIn, notice }: { onSignedIn: (me: Me, token: string) => void; notice: PageNotice | null }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const candidate = token.trim();
    if (!candidate) return setError('Paste the agent’s token.');
    setBusy(true);
    setError(null);
    try {
      const { me } = await requestAs(candidate, ConsoleMeDocument);
      onSignedIn(me, candidate);
    } catch (failure) {
      setError(failure instanceof ApiError && failure.code === 'unauthorized' ? 'That token was not accepted: check that you copied all of it.' : describeError(failure));
      setBusy(false);
    }
  };
  return html`<main class="signin">
    ${notice ? html`<${Notice} kind=${notice.kind}>${notice.text}<//>` : null}
    <form class="panel form-grid" onSubmit=${submit} aria-labelledby="signin-title" noValidate>
      <h2 id="signin-title">Sign in as an agent</h2>
      <p class="hint">Paste the agent’s token (<code>agt_…</code>). It stays in this tab only and is forgotten when you sign out or close the tab.</p>
      <label for="agent-token">Agent token</label>
      <input id="agent-token" type="password" autocomplete="off" spellcheck=${false} value=${token} aria-invalid=${error ? 'true' : 'false'}
        aria-describedby=${error ? 'agent-token-error' : undefined} onInput=${(e: Event) => setToken((e.target as HTMLInputElement).value)} />
      ${error ? html`<p id="agent-token-error" class="field-error" role="alert">${error}</p>` : null}
      <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Checking…' : 'Sign in'}</button></div>
    </form>
  </main>`;
}

function Activity({ events }: { events: LiveEvent[] }) {
  return html`<section class="panel activity" aria-labelledby="activity-title">
    <h2 id="activity-title">Live activity</h2>
    ${events.length
      ? html`<ol data-testid="activity">
          ${events.map(
            (event) => html`<li data-testid="live-event" data-cursor=${event.cursor} data-booking=${event.booking.id}>
              <span class="muted">${formatTime(new Date(event.createdAt))}</span> ${`${event.type.replace('booking.', '')}: ${formatRange(new Date(event.booking.startsAt), new Date(event.booking.endsAt))}`}${event.previous
                ? ` (was ${formatRange(new Date(event.previous.startsAt), new Date(event.previous.endsAt))})`
                : ''}
            </li>`,
          )}
        </ol>`
      : html`<p class="empty">Changes to this calendar appear here as they happen, whoever makes them.</p>`}
  </section>`;
}

export function App() {
  const [state, setState] = useState<ConsoleState>(readState);
  const [me, setMe] = useState<Me | null>(null);
  const [checking, setChecking] = useState(() => storedAgentToken() !== null);
  const [notice, setNotice] = useState<PageNotice | null>(null);
  const [liveState, setLiveState] = useState<LiveState>('connecting');
  const [activity, setActivity] = useState<LiveEvent[]>([]);
  const hub = useMemo(() => new LiveHub(), []);
  const tabBar = useTabBar(state.view);

  const signOut = (next: PageNotice) => {
    forgetAgentToken();
    setMe(null);
    setActivity([]);
    setNotice(next);
  };

  useEffect(() => {
    whenTokenRejected(() => signOut({ kind: 'error', text: 'The agent token is no longer accepted. Sign in again.' }));
    const onPop = () => setState(readState());
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);

  // A token kept from earlier in this tab: check it is still good.
  useEffect(() => {
    if (!storedAgentToken()) return;
    api(ConsoleMeDocument)
      .then(({ me: current }) => setMe(current))
      .catch((failure: unknown) => !(failure instanceof ApiError && failure.code === 'unauthorized') && setNotice({ kind: 'error', text: describeError(failure) }))
      .finally(() => setChecking(false));
  }, []);

  // Signed in: the live connection, for as long as the session lasts.
  useEffect(() => {
    const token = storedAgentToken();
    if (!me || !token) return;
    return startLive({
      token,
      onEvent: (event) => {
        setActivity((events) => [event, ...events].slice(0, 15));
        hub.emit({ kind: 'event', event });
      },
      onState: setLiveState,
      onGap: () => hub.emit({ kind: 'gap' }),
      onRejected: () => signOut({ kind: 'error', text: 'The agent token is no longer accepted. Sign in again.' }),
    });
  }, [me?.id]);

  const navigate = (next: Partial<ConsoleState>) => {
    const merged = { ...state, ...next };
    writeState(merged);
    setState(merged);
  };

  if (checking) return html`<div class="shell"><${Loading} label="Checking the session…" /></div>`;
  if (!me) {
    return html`<div class="shell console">
      <header><h1>Agent console</h1></header>
      <${SignIn}
        notice=${notice}
        onSignedIn=${(agent: Me, token: string) => {
          keepAgentToken(token);
          setNotice(null);
          setMe(agent);
        }}
      />
    </div>`;
  }

  const weekStart = weekFromKey(state.week);
  const views: Record<View, () => unknown> = {
    calendar: () => html`<${CalendarView} agentId=${me.id} weekStart=${weekStart} hub=${hub} onWeek=${(week: Date) => navigate({ week: dateKey(week) })} />`,
    hours: () => html`<${WorkingHoursView} me=${me} />`,
    proposals: () => html`<${ProposalsView} agentId=${me.id} hub=${hub} />`,
    availability: () =>
      html`<${AvailabilityView} visibility=${me.freeBusyVisibility ?? null} onVisibility=${(freeBusyVisibility: Me['freeBusyVisibility']) => setMe({ ...me, freeBusyVisibility })} />`,
    webhooks: () => html`<${WebhooksView} />`,
    agents: () => html`<${AgentsView} me=${me} />`,
    feeds: () => html`<${FeedsView} />`,
  };
  return html`<div class="shell console">
    <header>
      <h1>Agent console</h1>
      <div class="session">
        <span>Signed in as <strong data-testid="agent-name">${me.name}</strong></span>
        <span class=${`live live-${liveState}`} role="status" aria-live="polite" data-testid="live-state" data-state=${liveState}>${LIVE_LABELS[liveState]}</span>
        <button type="button" class="secondary" onClick=${() => signOut({ kind: 'info', text: 'You are signed out; the token was removed from this tab.' })}>Sign out</button>
      </div>
    </header>
    <nav class="tabs" aria-label="Sections" ref=${tabBar}>
      ${VIEWS.map(
        (entry) => html`<a href=${`?view=${entry.view}`} aria-current=${state.view === entry.view ? 'page' : undefined}
          onClick=${(event: Event) => (event.preventDefault(), navigate({ view: entry.view }))}>${entry.label}</a>`,
      )}
    </nav>
    ${notice ? html`<${Notice} kind=${notice.kind} onClose=${() => setNotice(null)}>${notice.text}<//>` : null}
    <main>
      ${views[state.view]()}
      <${Activity} events=${activity} />
    </main>
  </div>`;
}
