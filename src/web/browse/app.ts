import { useCallback, useEffect, useState } from 'preact/hooks';
import { AUTH_METHODS, PRICING_MODELS, checkToolSubmission } from '../../modules/directory/browser.js';
import {
  BrowseToolsDocument,
  CategoriesDocument,
  CurrentViewerDocument,
  LeaderboardAndStatsDocument,
  RedeemLinkDocument,
  SendMagicLinkDocument,
  SubmitDocument,
  ToolDetailsDocument,
  VoteDocument,
  type BrowseToolsQuery,
  type CategoriesQuery,
  type LeaderboardAndStatsQuery,
  type ToolDetailsQuery,
  type ToolSummaryFragment,
} from '../generated/pages/graphql.js';
import { ApiError, request, storedToken, TOKEN_KEY } from './api.js';
import { useTabBar } from './scroll-cue.js';
import { Failure, html, Loading, Notice, useLoad } from './ui.js';
import { readState, writeState, type PageState, type Sort, type View } from './url-state.js';

const PAGE_SIZE = 12;

type Viewer = { id: string; email: string };

// ---------------------------------------------------------------------------------------------------
// Session: the JWT lives in localStorage under `lp_token`.

function SignIn({ viewer, onSignedOut }: { viewer: Viewer | null; onSignedOut: () => void }) {
  const [email, setEmail] = useState('');
  const [state, setState] = useState<{ kind: 'idle' | 'sending' | 'sent' } | { kind: 'error'; message: string }>({ kind: 'idle' });

  if (viewer) {
    return html`<div class="session">
      <span>Signed in as <strong data-testid="viewer-email">${viewer.email}</strong></span>
      <button type="button" class="secondary" onClick=${onSignedOut}>Sign out</button>
    </div>`;
  }
  const send = async (event: Event) => {
    event.preventDefault();
    setState({ kind: 'sending' });
    try {
      await request(SendMagicLinkDocument, { email });
      setState({ kind: 'sent' });
    } catch (error) {
      setState({ kind: 'error', message: error instanceof ApiError && error.fields.email ? `E-mail ${error.fields.email}` : (error as Error).message });
    }
  };
  if (state.kind === 'sent') {
    return html`<div class="session" role="status">Check <strong>${email}</strong> for a sign-in link (valid 15 minutes).</div>`;
  }
  return html`<form class="session" onSubmit=${send} aria-label="Sign in">
    <label for="signin-email" class="visually-hidden">E-mail address</label>
    <input id="signin-email" type="email" required placeholder="you@example.com" value=${email} onInput=${(e: Event) => setEmail((e.target as HTMLInputElement).value)} />
    <button type="submit" disabled=${state.kind === 'sending'}>${state.kind === 'sending' ? 'Sending…' : 'Email me a sign-in link'}</button>
    ${state.kind === 'error' ? html`<span class="field-error" role="alert">${state.message}</span>` : null}
  </form>`;
}

// ---------------------------------------------------------------------------------------------------
// The catalogue.

function VoteButton({ tool, viewer, onChange }: { tool: ToolSummaryFragment; viewer: Viewer | null; onChange: (tool: ToolSummaryFragment) => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const toggle = async () => {
    if (!viewer) {
      setError('Sign in to vote');
      return;
    }
    const before = tool;
    // Optimistic: show the new state at once, then take the server's count.
    onChange({ ...tool, viewerHasVoted: !tool.viewerHasVoted, voteCount: tool.voteCount + (tool.viewerHasVoted ? -1 : 1) });
    setBusy(true);
    setError(null);
    try {
      const { toggleVote } = await request(VoteDocument, { toolId: tool.id });
      onChange({ ...before, viewerHasVoted: toggleVote.voted, voteCount: toggleVote.voteCount });
    } catch (failure) {
      onChange(before);
      setError((failure as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return html`<div class="vote">
    <button
      type="button"
      class=${tool.viewerHasVoted ? 'voted' : ''}
      aria-pressed=${tool.viewerHasVoted}
      aria-label=${`${tool.viewerHasVoted ? 'Remove your vote for' : 'Vote for'} ${tool.name}`}
      disabled=${busy}
      onClick=${toggle}
    >▲ <span data-testid="vote-count">${tool.voteCount}</span></button>
    ${error ? html`<span class="field-error" role="alert">${error}</span>` : null}
  </div>`;
}

function ToolCard({ tool, viewer, onOpen, onChange }: { tool: ToolSummaryFragment; viewer: Viewer | null; onOpen: () => void; onChange: (tool: ToolSummaryFragment) => void }) {
  return html`<li class="card" data-testid="tool-card">
    <div class="card-main">
      <h3><a href=${`?tool=${tool.id}`} onClick=${(event: Event) => (event.preventDefault(), onOpen())}>${tool.name}</a></h3>
      <p>${tool.description}</p>
      <div class="badges">
        <span class="badge">${tool.category.name}</span>
        ${tool.pricingModel ? html`<span class="badge">${tool.pricingModel.replace('_', ' ')}</span>` : null}
        <span class=${`badge badge-${tool.submissionSource}`}>${tool.submissionSource === 'agent' ? 'by an agent' : 'by a human'}</span>
      </div>
    </div>
    <${VoteButton} tool=${tool} viewer=${viewer} onChange=${onChange} />
  </li>`;
}

function ToolDetails({ id, onClose }: { id: number; onClose: () => void }) {
  const [state] = useLoad<ToolDetailsQuery>(() => request(ToolDetailsDocument, { id }), String(id));
  return html`<section class="details" aria-labelledby="details-title">
    <button type="button" class="secondary" onClick=${onClose}>← Back to the list</button>
    ${state.status === 'loading' ? html`<${Loading} label="Loading the tool…" />` : null}
    ${state.status === 'error' ? html`<${Failure} message=${state.message} retry=${state.retry} />` : null}
    ${state.status === 'ready'
      ? html`<article>
          <h2 id="details-title">${state.data.tool.name}</h2>
          <p>${state.data.tool.description}</p>
          <dl>
            <dt>Website</dt><dd><a href=${state.data.tool.url} rel="noopener noreferrer" target="_blank">${state.data.tool.url}</a></dd>
            <dt>Category</dt><dd>${state.data.tool.category.name}</dd>
            <dt>Capabilities</dt><dd>${state.data.tool.capabilities.length ? state.data.tool.capabilities.join(', ') : '—'}</dd>
            <dt>Pricing model</dt><dd data-testid="pricing">${state.data.tool.pricingModel ?? 'not given'}</dd>
            <dt>API endpoint</dt><dd>${state.data.tool.apiEndpoint ?? 'not given'}</dd>
            <dt>Authentication</dt><dd>${state.data.tool.authMethod ?? 'not given'}</dd>
            <dt>Votes</dt><dd>${state.data.tool.voteCount}</dd>
            <dt>Submitted</dt><dd>${state.data.tool.submittedByAgent ? `by agent ${state.data.tool.submittedByAgent}` : 'by a human'}, ${new Date(state.data.tool.createdAt).toLocaleDateString()}</dd>
          </dl>
        </article>`
      : null}
  </section>`;
}

function ToolList({ state, navigate, viewer, categories }: { state: PageState; navigate: (next: Partial<PageState>) => void; viewer: Viewer | null; categories: CategoriesQuery['categories'] }) {
  const key = `${state.category}|${state.sort}|${state.page}|${viewer?.id ?? ''}`;
  const [load, replace] = useLoad<BrowseToolsQuery>(
    () => request(BrowseToolsDocument, { category: state.category || null, sort: state.sort, page: state.page, limit: PAGE_SIZE }),
    key,
  );
  const update = (tool: ToolSummaryFragment) => {
    if (load.status !== 'ready') return;
    replace({ tools: { ...load.data.tools, tools: load.data.tools.tools.map((item) => (item.id === tool.id ? tool : item)) } });
  };
  return html`<section aria-labelledby="tools-title">
    <h2 id="tools-title" class="visually-hidden">Tools</h2>
    <div class="filters">
      <label>Category
        <select value=${state.category} onChange=${(e: Event) => navigate({ category: (e.target as HTMLSelectElement).value, page: 1 })}>
          <option value="">All categories</option>
          ${categories.map((category) => html`<option value=${category.slug}>${category.name} (${category.toolCount ?? 0})</option>`)}
        </select>
      </label>
      <label>Sort
        <select value=${state.sort} onChange=${(e: Event) => navigate({ sort: (e.target as HTMLSelectElement).value as Sort, page: 1 })}>
          <option value="votes">Most votes</option>
          <option value="newest">Newest</option>
          <option value="trending">Trending</option>
        </select>
      </label>
    </div>
    ${load.status === 'loading' ? html`<${Loading} label="Loading tools…" />` : null}
    ${load.status === 'error' ? html`<${Failure} message=${load.message} retry=${load.retry} />` : null}
    ${load.status === 'ready'
      ? html`
          ${load.data.tools.tools.length === 0 ? html`<p class="empty">No tools here yet.</p>` : null}
          <ul class="cards">
            ${load.data.tools.tools.map(
              (tool) => html`<${ToolCard} key=${tool.id} tool=${tool} viewer=${viewer} onOpen=${() => navigate({ tool: tool.id })} onChange=${update} />`,
            )}
          </ul>
          <nav class="pager" aria-label="Pages">
            <button type="button" disabled=${state.page <= 1} onClick=${() => navigate({ page: state.page - 1 })}>← Previous</button>
            <span data-testid="page-info">Page ${load.data.tools.page} of ${Math.max(1, load.data.tools.totalPages)} · ${load.data.tools.totalTools} tools</span>
            <button type="button" disabled=${state.page >= load.data.tools.totalPages} onClick=${() => navigate({ page: state.page + 1 })}>Next →</button>
          </nav>`
      : null}
  </section>`;
}

// ---------------------------------------------------------------------------------------------------
// Leaderboard and stats.

function Ranking({ title, tools }: { title: string; tools: ToolSummaryFragment[] }) {
  return html`<div class="ranking">
    <h3>${title}</h3>
    ${tools.length
      ? html`<ol>${tools.map((tool) => html`<li><span>${tool.name}</span> <span class="count">${tool.voteCount} votes</span></li>`)}</ol>`
      : html`<p class="empty">None yet.</p>`}
  </div>`;
}

function LeaderboardView({ onlyStats }: { onlyStats: boolean }) {
  const [load] = useLoad<LeaderboardAndStatsQuery>(() => request(LeaderboardAndStatsDocument), 'board');
  if (load.status === 'loading') return html`<${Loading} label="Loading…" />`;
  if (load.status === 'error') return html`<${Failure} message=${load.message} retry=${load.retry} />`;
  const { stats, leaderboard } = load.data;
  const statsBlock = html`<dl class="stats" data-testid="stats">
    <div><dt>Tools</dt><dd>${stats.totalTools}</dd></div>
    <div><dt>Votes</dt><dd>${stats.totalVotes}</dd></div>
    <div><dt>Agent submissions</dt><dd>${stats.agentSubmissions}</dd></div>
    <div><dt>Agent votes</dt><dd>${stats.agentVotes}</dd></div>
  </dl>`;
  if (onlyStats) return html`<section aria-label="Stats">${statsBlock}</section>`;
  return html`<section class="leaderboard" aria-label="Leaderboard">
    <${Ranking} title="Submitted by agents" tools=${leaderboard.agents} />
    <${Ranking} title="Submitted by humans" tools=${leaderboard.humans} />
  </section>`;
}

// ---------------------------------------------------------------------------------------------------
// Submitting a tool: the same rules as the server, and the server's errors next to the fields.

const EMPTY_FORM = { name: '', url: '', description: '', category_id: '', capabilities: '', api_endpoint: '', auth_method: '', pricing_model: '' };

function SubmitView({ viewer, categories, onSubmitted }: { viewer: Viewer | null; categories: CategoriesQuery['categories']; onSubmitted: (id: number) => void }) {
  const [form, setForm] = useState(EMPTY_FORM);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  if (!viewer) return html`<${Notice} kind="info">Sign in (top of the page) to submit a tool.<//>`;

  const field = (name: keyof typeof EMPTY_FORM) => ({
    id: `f-${name}`,
    name,
    value: form[name],
    'aria-invalid': errors[name] ? 'true' : 'false',
    'aria-describedby': errors[name] ? `e-${name}` : undefined,
    onInput: (event: Event) => setForm({ ...form, [name]: (event.target as HTMLInputElement).value }),
  });
  const error = (name: string) => (errors[name] ? html`<span id=${`e-${name}`} class="field-error" role="alert">${errors[name]}</span>` : null);

  const submit = async (event: Event) => {
    event.preventDefault();
    const input = {
      name: form.name,
      url: form.url,
      description: form.description,
      categoryId: Number(form.category_id),
      capabilities: form.capabilities ? form.capabilities.split(',').map((item) => item.trim()).filter(Boolean) : null,
      apiEndpoint: form.api_endpoint || null,
      authMethod: form.auth_method || null,
      pricingModel: form.pricing_model || null,
    };
    const problems = checkToolSubmission(input);
    setErrors(problems);
    if (Object.keys(problems).length) return;
    setBusy(true);
    try {
      const { submitTool } = await request(SubmitDocument, { input });
      setForm(EMPTY_FORM);
      onSubmitted(submitTool.id);
    } catch (failure) {
      if (failure instanceof ApiError && failure.code === 'conflict') setErrors({ url: 'This URL was already submitted.' });
      else if (failure instanceof ApiError && Object.keys(failure.fields).length) setErrors(failure.fields);
      else setErrors({ form: (failure as Error).message });
    } finally {
      setBusy(false);
    }
  };

  return html`<form class="submit" onSubmit=${submit} noValidate aria-labelledby="submit-title">
    <h2 id="submit-title">Submit a tool</h2>
    ${errors.form ? html`<${Notice} kind="error">${errors.form}<//>` : null}
    <label for="f-name">Name</label><input ...${field('name')} maxLength="255" required />${error('name')}
    <label for="f-url">URL</label><input ...${field('url')} type="url" placeholder="https://" required />${error('url')}
    <label for="f-description">Description</label><textarea ...${field('description')} maxLength="1000" rows="3" required></textarea>${error('description')}
    <label for="f-category_id">Category</label>
    <select ...${field('category_id')} required>
      <option value="">Choose…</option>
      ${categories.map((category) => html`<option value=${String(category.id)}>${category.name}</option>`)}
    </select>${error('category_id')}
    <label for="f-capabilities">Capabilities <small>(comma-separated)</small></label><input ...${field('capabilities')} />${error('capabilities')}
    <label for="f-api_endpoint">API endpoint</label><input ...${field('api_endpoint')} type="url" />${error('api_endpoint')}
    <label for="f-auth_method">Authentication</label>
    <select ...${field('auth_method')}><option value="">Not given</option>${AUTH_METHODS.map((method) => html`<option value=${method}>${method}</option>`)}</select>${error('auth_method')}
    <label for="f-pricing_model">Pricing model</label>
    <select ...${field('pricing_model')}><option value="">Not given</option>${PRICING_MODELS.map((model) => html`<option value=${model}>${model}</option>`)}</select>${error('pricing_model')}
    <button type="submit" disabled=${busy}>${busy ? 'Submitting…' : 'Submit'}</button>
  </form>`;
}

// ---------------------------------------------------------------------------------------------------

export function App() {
  const [state, setState] = useState<PageState>(readState);
  const [viewer, setViewer] = useState<Viewer | null>(null);
  const [notice, setNotice] = useState<{ kind: 'info' | 'error'; text: string } | null>(null);
  const [sessionReady, setSessionReady] = useState(false);
  const [categories] = useLoad<CategoriesQuery>(() => request(CategoriesDocument), 'categories');

  const navigate = useCallback((next: Partial<PageState>) => {
    setState((current) => {
      const merged = { ...current, tool: null, ...next };
      writeState(merged);
      return merged;
    });
    window.scrollTo({ top: 0 });
  }, []);

  useEffect(() => {
    const onPop = () => setState(readState());
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);

  // Sign-in: redeem ?token= once (then drop it from the URL), or check the stored JWT is still good.
  useEffect(() => {
    const params = new URLSearchParams(location.search);
    const linkToken = params.get('token');
    const start = async () => {
      if (linkToken) {
        params.delete('token');
        history.replaceState(null, '', `${location.pathname}${params.size ? `?${params}` : ''}`);
        try {
          const { redeemMagicLink } = await request(RedeemLinkDocument, { token: linkToken });
          localStorage.setItem(TOKEN_KEY, redeemMagicLink.token);
          setViewer(redeemMagicLink.user);
          setNotice({ kind: 'info', text: `Welcome, ${redeemMagicLink.user.email}. You are signed in.` });
        } catch (error) {
          setNotice({ kind: 'error', text: `That sign-in link did not work: ${(error as Error).message}` });
        }
        return;
      }
      if (!storedToken()) return;
      try {
        const { viewer: current } = await request(CurrentViewerDocument);
        if (current) setViewer(current);
        else {
          localStorage.removeItem(TOKEN_KEY);
          setNotice({ kind: 'error', text: 'Your session has expired or was rejected. Please sign in again.' });
        }
      } catch {
        setNotice({ kind: 'error', text: 'Could not check your session; you appear signed out.' });
      }
    };
    start().finally(() => setSessionReady(true));
  }, []);

  const signOut = () => {
    localStorage.removeItem(TOKEN_KEY);
    setViewer(null);
    setNotice({ kind: 'info', text: 'You are signed out.' });
  };

  const tabBar = useTabBar(state.tool ? null : state.view);
  const tabs: { view: View; label: string }[] = [
    { view: 'tools', label: 'Tools' },
    { view: 'leaderboard', label: 'Leaderboard' },
    { view: 'stats', label: 'Stats' },
    { view: 'submit', label: 'Submit a tool' },
  ];
  const categoryList = categories.status === 'ready' ? categories.data.categories : [];

  return html`<div class="shell">
    <header>
      <h1><a href="/browse" onClick=${(e: Event) => (e.preventDefault(), navigate({ view: 'tools', category: '', sort: 'votes', page: 1 }))}>Tool directory</a></h1>
      ${sessionReady ? html`<${SignIn} viewer=${viewer} onSignedOut=${signOut} />` : null}
    </header>
    <nav class="tabs" aria-label="Sections" ref=${tabBar}>
      ${tabs.map(
        (tab) => html`<a href=${tab.view === 'tools' ? '/browse' : `?view=${tab.view}`} aria-current=${state.view === tab.view ? 'page' : undefined}
          onClick=${(e: Event) => (e.preventDefault(), navigate({ view: tab.view }))}>${tab.label}</a>`,
      )}
    </nav>
    ${notice ? html`<${Notice} kind=${notice.kind} onClose=${() => setNotice(null)}>${notice.text}<//>` : null}
    <main>
      ${categories.status === 'error' ? html`<${Failure} message=${categories.message} retry=${categories.retry} />` : null}
      ${state.tool
        ? html`<${ToolDetails} id=${state.tool} onClose=${() => history.back()} />`
        : state.view === 'tools'
          ? html`<${ToolList} state=${state} navigate=${navigate} viewer=${viewer} categories=${categoryList} />`
          : state.view === 'submit'
            ? html`<${SubmitView} viewer=${viewer} categories=${categoryList}
                onSubmitted=${(id: number) => {
                  setNotice({ kind: 'info', text: 'Thank you: the tool is listed.' });
                  navigate({ view: 'tools', tool: id });
                }} />`
            : html`<${LeaderboardView} onlyStats=${state.view === 'stats'} />`}
    </main>
  </div>`;
}
