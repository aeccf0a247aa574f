/**
 * U+0000 (NUL) passes JSON, URLs and GraphQL, but PostgreSQL holds it in no `text` or `jsonb`, and the
 * ORM's statements (values written into the SQL text) break on one: the server cannot store it, so
 * every way in refuses it before it reaches SQL (the JSON body parser, query strings, GraphQL string
 * literals and variables).
 */
export const UNSTORABLE_TEXT_MESSAGE = 'must not contain the character U+0000';

export const holdsNul = (text: string): boolean => text.includes('\u0000');

/**
 * Where the first string of a JSON value (a string, or an object key) holding U+0000 is, as a
 * dotted path from `path` (`input.metadata.note`, `agentIds.2`); undefined when there is none.
 * Walked without recursion: a body may nest as deep as its size allows.
 */
export function nulPathIn(value: unknown, path: string): string | undefined {
  const pending: [unknown, string][] = [[value, path]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [current, at] = next;
    if (typeof current === 'string') {
      if (holdsNul(current)) return at;
    } else if (Array.isArray(current)) {
      for (let index = current.length - 1; index >= 0; index--) pending.push([current[index], `${at}.${index}`]);
    } else if (typeof current === 'object' && current !== null) {
      const entries = Object.entries(current);
      for (const [key] of entries) if (holdsNul(key)) return `${at}.${key}`;
      for (let index = entries.length - 1; index >= 0; index--) pending.push([entries[index]![1], `${at}.${entries[index]![0]}`]);
    }
  }
  return undefined;
}
