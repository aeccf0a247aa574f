/** What the console shows, kept in the URL (never the token) so a view survives a reload and can be shared. */
export type View = 'calendar' | 'hours' | 'proposals' | 'availability' | 'webhooks' | 'agents' | 'feeds';

export const VIEWS: readonly { view: View; label: string }[] = [
  { view: 'calendar', label: 'Calendar' },
  { view: 'hours', label: 'Working hours' },
  { view: 'proposals', label: 'Proposals' },
  { view: 'availability', label: 'Availability' },
  { view: 'webhooks', label: 'Webhooks' },
  { view: 'agents', label: 'Agents' },
  { view: 'feeds', label: 'Calendar feeds' },
];

export interface ConsoleState {
  view: View;
  /** The Monday of the week shown, `YYYY-MM-DD` (local); empty for this week. */
  week: string;
}

export function readState(search = location.search): ConsoleState {
  const params = new URLSearchParams(search);
  const view = params.get('view');
  return {
    view: VIEWS.some((entry) => entry.view === view) ? (view as View) : 'calendar',
    week: params.get('week') ?? '',
  };
}

export function writeState(state: ConsoleState): void {
  const params = new URLSearchParams();
  if (state.view !== 'calendar') params.set('view', state.view);
  if (state.week) params.set('week', state.week);
  const query = params.toString();
  history.pushState(null, '', `${location.pathname}${query ? `?${query}` : ''}`);
}
