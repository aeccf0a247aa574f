import htm from 'htm';
import { h, type ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/** The pages' templates: htm's tagged templates over Preact (no JSX compile step). */
export const html = htm.bind(h);

export type Load<T> = { status: 'loading' } | { status: 'error'; message: string; retry: () => void } | { status: 'ready'; data: T };

/**
 * Runs `fetcher` whenever `key` changes; the answer, its loading state and its error in one value,
 * a setter for a locally changed answer, and `reload` to ask again (keeping the answer on screen meanwhile).
 */
export function useLoad<T>(fetcher: () => Promise<T>, key: string): [Load<T>, (data: T) => void, () => void] {
  const [state, setState] = useState<Load<T>>({ status: 'loading' });
  const [attempt, setAttempt] = useState(0);
  const loadedKey = useRef<string | undefined>(undefined);
  useEffect(() => {
    let live = true;
    // A reload of the answer on screen keeps it there until the new one; anything else shows "loading".
    setState((current) => (current.status === 'ready' && loadedKey.current === key ? current : { status: 'loading' }));
    fetcher().then(
      (data) => {
        if (!live) return;
        loadedKey.current = key;
        setState({ status: 'ready', data });
      },
      (error: unknown) =>
        live && setState({ status: 'error', message: error instanceof Error ? error.message : 'Something went wrong', retry: () => setAttempt((n) => n + 1) }),
    );
    return () => {
      live = false;
    };
  }, [key, attempt]);
  return [state, (data: T) => setState({ status: 'ready', data }), () => setAttempt((n) => n + 1)];
}

export function Loading({ label }: { label: string }) {
  return html`<p class="loading" role="status" aria-live="polite">${label}</p>`;
}

export function Failure({ message, retry }: { message: string; retry?: () => void }) {
  return html`<div class="error" role="alert">
    <p>${message}</p>
    ${retry ? html`<button type="button" onClick=${retry}>Try again</button>` : null}
  </div>`;
}

export function Notice({ kind, children, onClose }: { kind: 'info' | 'error'; children: ComponentChildren; onClose?: () => void }) {
  return html`<div class=${`notice notice-${kind}`} role=${kind === 'error' ? 'alert' : 'status'}>
    <span>${children}</span>
    ${onClose ? html`<button type="button" class="link" aria-label="Dismiss" onClick=${onClose}>×</button>` : null}
  </div>`;
}
