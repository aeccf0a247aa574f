import { useState } from 'preact/hooks';
import { describeError } from './errors.js';

/**
 * A panel's buttons: `run` sends one action, keeps the panel busy meanwhile, and hands its message to
 * `onChanged` (which closes the panel) or shows the server's refusal in words and lets the person retry.
 */
export function useAction(onChanged: (message: string) => void): {
  busy: boolean;
  error: string | null;
  run: (action: () => Promise<unknown>, message: string) => Promise<void>;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async (action: () => Promise<unknown>, message: string) => {
    setBusy(true);
    setError(null);
    try {
      await action();
      onChanged(message);
    } catch (failure) {
      setError(describeError(failure));
      setBusy(false);
    }
  };
  return { busy, error, run };
}
