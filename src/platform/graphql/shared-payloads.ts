/**
 * Serialises a subscription result once however many subscribers receive it.
 *
 * graphql-ws turns every `next` message into JSON whole, once per subscriber. Subscribers that share
 * an execution (see shared-execution.ts) share its result object, so with 1,000 subscribers of one
 * agent the same result was serialised 1,000 times per event: a fifth of the fan-out's CPU. Here the
 * message replacer, called first with the whole message, makes such a message itself from the
 * payload's JSON (made once per result, cached by the identity of its `data`) and its own id, and
 * gives JSON.stringify an empty object to finish at once; the socket's `send`, which graphql-ws calls
 * synchronously with the string it just made, sends the message made here instead.
 *
 * Only payloads that are exactly `{ data }` take this path; anything with errors or extensions is
 * serialised as graphql-ws always does.
 */
const STAND_IN = Object.freeze({});
const STAND_IN_JSON = JSON.stringify(STAND_IN);

const serialised = new WeakMap<object, string>();
/** The message made for the stand-in being sent; cleared at the start of every message. */
let pendingMessage: string | undefined;

/** `jsonMessageReplacer` for graphql-ws's server. */
export function sharedPayloadReplacer(this: unknown, key: string, value: unknown): unknown {
  if (key !== '') return value;
  pendingMessage = undefined;
  const message = value as { id?: unknown; type?: unknown; payload?: unknown };
  if (message.type !== 'next' || typeof message.id !== 'string' || !isDataOnly(message.payload)) return value;
  for (const field in message) if (field !== 'id' && field !== 'type' && field !== 'payload') return value;
  let json = serialised.get(message.payload.data);
  if (json === undefined) serialised.set(message.payload.data, (json = JSON.stringify(message.payload)));
  pendingMessage = `{"id":${JSON.stringify(message.id)},"type":"next","payload":${json}}`;
  return STAND_IN;
}

/** Applied to every outgoing text message: the message the replacer made in place of its stand-in. */
export function withSharedPayload(message: string): string {
  const made = pendingMessage;
  if (made === undefined) return message;
  pendingMessage = undefined;
  return message === STAND_IN_JSON ? made : message;
}

function isDataOnly(value: unknown): value is { data: object } {
  if (value === null || typeof value !== 'object') return false;
  const data = (value as { data?: unknown }).data;
  if (data === null || typeof data !== 'object') return false;
  for (const key in value) if (key !== 'data') return false;
  return true;
}
