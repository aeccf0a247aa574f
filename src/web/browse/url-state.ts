/** What the page shows, kept in the URL so a view can be shared and the back button works. */
export type View = 'tools' | 'leaderboard' | 'stats' | 'submit';
export type Sort = 'votes' | 'newest' | 'trending';

export interface PageState {
  view: View;
  category: string;
  sort: Sort;
  page: number;
  tool: number | null;
}

const VIEWS: readonly View[] = ['tools', 'leaderboard', 'stats', 'submit'];
const SORTS: readonly Sort[] = ['votes', 'newest', 'trending'];

export function readState(search = location.search): PageState {
  const params = new URLSearchParams(search);
  const view = params.get('view') as View | null;
  const sort = params.get('sort') as Sort | null;
  const page = Number(params.get('page') ?? '1');
  const tool = Number(params.get('tool') ?? '');
  return {
    view: view && VIEWS.includes(view) ? view : 'tools',
    category: params.get('category') ?? '',
    sort: sort && SORTS.includes(sort) ? sort : 'votes',
    page: Number.isInteger(page) && page > 0 ? page : 1,
    tool: Number.isInteger(tool) && tool > 0 ? tool : null,
  };
}

export function writeState(state: PageState, mode: 'push' | 'replace' = 'push'): void {
  const params = new URLSearchParams();
  if (state.view !== 'tools') params.set('view', state.view);
  if (state.category) params.set('category', state.category);
  if (state.sort !== 'votes') params.set('sort', state.sort);
  if (state.page !== 1) params.set('page', String(state.page));
  if (state.tool) params.set('tool', String(state.tool));
  const query = params.toString();
  const url = `${location.pathname}${query ? `?${query}` : ''}`;
  if (mode === 'push') history.pushState(null, '', url);
  else history.replaceState(null, '', url);
}
