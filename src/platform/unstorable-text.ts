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

/**
 * Where parsed JSON holds a string with U+0000, as field paths (`agentIds.0`; `root` for `value` itself).
 * Iterative: a body of nested arrays is as deep as its size allows, deeper than the call stack.
 */
export function fieldsWithNul(value: unknown, root: string): string[] {
  const found: string[] = [];
  const pending: [path: string[], node: unknown][] = [[[], value]];
  while (pending.length > 0) {
    const [path, node] = pending.pop()!;
    if (typeof node === 'string') {
      if (holdsNul(node)) found.push(path.length ? path.join('.') : root);
    } else if (node !== null && typeof node === 'object') {
      for (const [key, child] of Object.entries(node)) pending.push([[...path, key], child]);
    }
  }
  return found;
}
