/**
 * Serialises a subscription result once however many subscribers receive it.
 *
 * graphql-ws turns every `next` message into JSON whole, once per subscriber. Subscribers that share
 * an execution (see shared-execution.ts) share its result object, so with 1,000 subscribers of one
 * agent the same result was serialised 1,000 times per event: a fifth of the fan-out's CPU. Here the
 * message replacer swaps such a payload for a placeholder and remembers the payload's JSON (made once
 * per result, cached by the identity of its `data`); the socket's `send`, which graphql-ws calls
 * synchronously with the string it just made, puts the JSON in the placeholder's place.
 *
 * Only payloads that are exactly `{ data }` take this path; anything with errors or extensions is
 * serialised as graphql-ws always does.
 */
const PLACEHOLDER = 'shared-payload-placeholder';
const PLACEHOLDER_TAIL = `"payload":${JSON.stringify(PLACEHOLDER)}}`;

const serialised = new WeakMap<object, string>();
/** The JSON for the placeholder in the message being made; cleared at the start of every message. */
let pendingPayload: string | undefined;

/** `jsonMessageReplacer` for graphql-ws's server. */
export function sharedPayloadReplacer(this: unknown, key: string, value: unknown): unknown {
  if (key === '') {
    pendingPayload = undefined;
    return value;
  }
  if (key !== 'payload' || (this as { type?: unknown }).type !== 'next' || !isDataOnly(value)) return value;
  let json = serialised.get(value.data);
  if (json === undefined) serialised.set(value.data, (json = JSON.stringify(value)));
  pendingPayload = json;
  return PLACEHOLDER;
}

/** Applied to every outgoing text message: restores the payload the replacer set aside. */
export function withSharedPayload(message: string): string {
  const payload = pendingPayload;
  if (payload === undefined) return message;
  pendingPayload = undefined;
  if (!message.endsWith(PLACEHOLDER_TAIL)) return message;
  return `${message.slice(0, message.length - PLACEHOLDER_TAIL.length)}"payload":${payload}}`;
}

function isDataOnly(value: unknown): value is { data: object } {
  if (value === null || typeof value !== 'object') return false;
  const data = (value as { data?: unknown }).data;
  if (data === null || typeof data !== 'object') return false;
  for (const key in value) if (key !== 'data') return false;
  return true;
}
