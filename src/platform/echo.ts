/**
 * How much of a client's input an error answer may repeat. A message may quote the value it refuses,
 * so that the client can find it, but never whole: a 900 KB argument quoted twice made the answer
 * twice the request. Every transport's messages go through these (AppError, the REST validation map,
 * the GraphQL error formatter, graphql-js's and ajv's own messages included).
 */
export const ECHO_LIMITS = {
  /** Characters of one value quoted in a message. */
  quotedChars: 64,
  /** Characters of one field name in a validation error map (a path the client's keys may spell). */
  fieldNameChars: 128,
  /** Characters of one whole message, whatever it quotes. */
  messageChars: 512,
  /** Fields one validation error names (the first ones found). */
  fields: 20,
} as const;

const ELLIPSIS = '…';

/** The first `max` UTF-16 units of `text`, never ending inside a surrogate pair, with `…` if anything was cut. */
function prefix(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  const end = last >= 0xd800 && last <= 0xdbff ? max - 1 : max;
  return `${text.slice(0, end)}${ELLIPSIS}`;
}

/** A client's value as an error message may quote it: the first 64 characters, then `…`. */
export function echo(value: string | number | bigint): string {
  return prefix(String(value), ECHO_LIMITS.quotedChars);
}

/** A double-quoted run in a message, as graphql-js, ajv and our own messages quote values and names. */
const QUOTED = /"((?:[^"\\]|\\.)*)"/g;

/**
 * A message as it may leave the server: each double-quoted value in it cut to a prefix (graphql-js
 * quotes the whole value it could not coerce), and the message itself cut after 512 characters.
 */
export function boundMessage(message: string): string {
  if (message.length <= ECHO_LIMITS.quotedChars) return message;
  const quotesCut = message.replace(QUOTED, (quoted, inner: string) =>
    inner.length > ECHO_LIMITS.quotedChars ? `"${prefix(inner, ECHO_LIMITS.quotedChars)}"` : quoted,
  );
  return prefix(quotesCut, ECHO_LIMITS.messageChars);
}

/** A field → message map with at most 20 fields, each name and message bounded. */
export function boundFieldErrors(fields: Readonly<Record<string, string>>): Record<string, string> {
  const bounded: Record<string, string> = {};
  let count = 0;
  for (const [field, message] of Object.entries(fields)) {
    if (count === ECHO_LIMITS.fields) break;
    const name = prefix(field, ECHO_LIMITS.fieldNameChars);
    if (Object.hasOwn(bounded, name)) continue;
    bounded[name] = boundMessage(message);
    count++;
  }
  return bounded;
}
