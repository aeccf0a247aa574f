import { useState } from 'preact/hooks';
import { Failure, html, Loading, useLoad } from '../browse/ui.js';
import { ConsoleChildrenDocument, ConsoleCreateChildDocument, type ConsoleMeQuery } from '../generated/console/graphql.js';
import { CopyField } from './copy-field.js';
import { describeError } from './errors.js';
import { api } from './session.js';
import { formatDate } from './time.js';

/** This agent, its child agents, and creating one (its token shown once, then gone). */
export function AgentsView({ me }: { me: ConsoleMeQuery['me'] }) {
  const [load, , reload] = useLoad(() => api(ConsoleChildrenDocument), 'children');
  return html`<div class="stack">
    <section class="panel" aria-labelledby="me-title">
      <h2 id="me-title">This agent</h2>
      <dl class="facts">
        <dt>Name</dt><dd>${me.name}</dd>
        <dt>Id</dt><dd><code data-testid="agent-id">${me.id}</code></dd>
        <dt>Parent</dt><dd>${me.parent ? html`${me.parent.name} <code>${me.parent.id}</code>` : 'none (the first agent)'}</dd>
        <dt>Created</dt><dd>${formatDate(new Date(me.createdAt))}</dd>
      </dl>
    </section>
    <${CreateChildForm} onCreated=${reload} />
    <section class="panel" aria-labelledby="children-title">
      <h2 id="children-title">Child agents</h2>
      ${load.status === 'loading' ? html`<${Loading} label="Loading child agents…" />` : null}
      ${load.status === 'error' ? html`<${Failure} message=${load.message} retry=${load.retry} />` : null}
      ${load.status === 'ready'
        ? load.data.me.children.length
          ? html`<ul class="rows">
              ${load.data.me.children.map(
                (child) => html`<li class="row" data-testid="child"><div class="row-main"><strong>${child.name}</strong><code>${child.id}</code></div><span class="muted">${formatDate(new Date(child.createdAt))}</span></li>`,
              )}
            </ul>`
          : html`<p class="empty">No child agents yet.</p>`
        : null}
    </section>
  </div>`;
}

function CreateChildForm({ onCreated }: { onCreated: () => void }) {
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ name: string; token: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (!name.trim()) return setError('Give the new agent a name.');
    setBusy(true);
    setError(null);
    try {
      const { createAgent } = await api(ConsoleCreateChildDocument, { input: { name: name.trim() } });
      setCreated({ name: createAgent.agent.name, token: createAgent.publicToken });
      setName('');
      onCreated();
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="panel form-grid" onSubmit=${submit} aria-labelledby="child-title" noValidate>
    <h2 id="child-title">Create a child agent</h2>
    <label for="ch-name">Name</label>
    <input id="ch-name" maxLength="120" value=${name} onInput=${(e: Event) => setName((e.target as HTMLInputElement).value)} />
    ${error ? html`<p class="field-error" role="alert">${error}</p>` : null}
    ${created
      ? html`<${CopyField} id="ch-token" label=${`Token of ${created.name}`} value=${created.token} dismissLabel="I have saved the token" onDismiss=${() => setCreated(null)} />`
      : null}
    <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Creating…' : 'Create agent'}</button></div>
  </form>`;
}
