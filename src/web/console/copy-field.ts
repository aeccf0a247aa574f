import { useRef, useState } from 'preact/hooks';
import { html } from '../browse/ui.js';

/**
 * A secret or URL shown once, with a copy button. The value lives only in the component that shows
 * it: nothing stores it, and once dismissed it is gone from the page.
 */
export function CopyField({ label, value, id, onDismiss, dismissLabel }: { label: string; value: string; id: string; onDismiss: () => void; dismissLabel: string }) {
  const [copied, setCopied] = useState<'no' | 'yes' | 'manual'>('no');
  const input = useRef<HTMLInputElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('yes');
    } catch {
      // No clipboard permission: select it so Ctrl+C / long-press copies it.
      input.current?.select();
      setCopied('manual');
    }
  };
  return html`<div class="secret" data-testid="shown-once">
    <label for=${id}>${label}</label>
    <div class="secret-row">
      <input id=${id} ref=${input} readonly value=${value} spellcheck=${false} onFocus=${(e: Event) => (e.target as HTMLInputElement).select()} />
      <button type="button" onClick=${copy}>Copy</button>
    </div>
    <p class="hint" role="status">${copied === 'yes' ? 'Copied.' : copied === 'manual' ? 'Selected: press Ctrl+C (or ⌘C) to copy.' : 'Shown only now: copy it somewhere safe.'}</p>
    <button type="button" class="secondary" onClick=${onDismiss}>${dismissLabel}</button>
  </div>`;
}
