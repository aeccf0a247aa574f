/**
 * Bounds of a free-form JSON object a client stores and reads back (an agent's `metadata` and
 * `config`). Such an object comes back on every read of its row, in pages of rows, so its size
 * decides the size of those pages: 16 KiB is room for a few hundred labels or settings, while a
 * page of 100 child agents carrying both objects stays near 3 MiB.
 */
export const FREE_FORM_OBJECT_LIMITS = {
  /** UTF-8 bytes of the object written as compact JSON (`JSON.stringify`). */
  maxBytes: 16 * 1024,
  /** Nesting: the object itself is level 1, each object or array inside it one more. */
  maxDepth: 8,
  /** Keys of every object at every level together. */
  maxKeys: 256,
} as const;

/** One sentence for schema descriptions (REST, GraphQL, MCP): the same numbers everywhere. */
export const FREE_FORM_OBJECT_RULE =
  `A JSON object of at most ${FREE_FORM_OBJECT_LIMITS.maxBytes} bytes (compact JSON, UTF-8), ` +
  `nested at most ${FREE_FORM_OBJECT_LIMITS.maxDepth} levels, with at most ${FREE_FORM_OBJECT_LIMITS.maxKeys} keys in all; ` +
  'more answers 400 naming the field.';

interface Shape {
  depth: number;
  keys: number;
}

// Walks with an explicit stack: a deeply nested document must not be able to overflow the call stack.
function measure(root: object): Shape {
  const pending: { value: unknown; depth: number }[] = [{ value: root, depth: 1 }];
  let depth = 0;
  let keys = 0;
  while (pending.length) {
    const { value, depth: level } = pending.pop()!;
    depth = Math.max(depth, level);
    // Past the bound the answer is already known; stop before walking the rest of a hostile document.
    if (depth > FREE_FORM_OBJECT_LIMITS.maxDepth || keys > FREE_FORM_OBJECT_LIMITS.maxKeys) break;
    const children = Array.isArray(value) ? value : Object.values(value as object);
    if (!Array.isArray(value)) keys += children.length;
    for (const child of children) if (child !== null && typeof child === 'object') pending.push({ value: child, depth: level + 1 });
  }
  return { depth, keys };
}

/**
 * Why `value` exceeds the bounds, as a validation message, or null when it fits. The caller has
 * checked that it is a JSON object (the transport's schema does).
 */
export function freeFormObjectProblem(value: object): string | null {
  // Depth first: JSON.stringify recurses, and a document nested thousands deep would overflow it.
  const { depth, keys } = measure(value);
  if (depth > FREE_FORM_OBJECT_LIMITS.maxDepth) return `must be nested at most ${FREE_FORM_OBJECT_LIMITS.maxDepth} levels`;
  if (keys > FREE_FORM_OBJECT_LIMITS.maxKeys) return `must have at most ${FREE_FORM_OBJECT_LIMITS.maxKeys} keys in all`;
  const bytes = Buffer.byteLength(JSON.stringify(value), 'utf8');
  if (bytes > FREE_FORM_OBJECT_LIMITS.maxBytes) return `must be at most ${FREE_FORM_OBJECT_LIMITS.maxBytes} bytes as JSON (is ${bytes})`;
  return null;
}
