import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { printExecutableGraphQLDocument } from '@graphql-tools/documents';
import { parse, type DocumentNode } from 'graphql';
import { LRUCache } from 'lru-cache';
import { GRAPHQL_LIMITS } from './limits.js';

/** GraphQL over HTTP's identifier of a persisted document: `sha256:` and the SHA-256 (hex) of its text. */
export const DOCUMENT_ID_PREFIX = 'sha256:';
const DOCUMENT_ID = /^sha256:([0-9a-f]{64})$/;

/** One document of the manifest. */
export interface TrustedDocument {
  /** `sha256:<hex>`, as clients send it in `documentId`. */
  readonly id: string;
  /** The hex SHA-256 of `text`: Apollo's `queryHash`, and what automatic persisted queries send. */
  readonly hash: string;
  readonly text: string;
  readonly document: DocumentNode;
}

/** The hex SHA-256 of a document's text (its UTF-8 bytes). */
export function documentHash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The hash inside a `sha256:<hex>` document id; undefined for any other form. */
export function hashOfDocumentId(documentId: string): string | undefined {
  return DOCUMENT_ID.exec(documentId)?.[1];
}

/**
 * The documents the build published (GraphQL Code Generator's persisted documents: the pages' and the
 * tests' operations), parsed once at start. A client names one by `documentId`, by the hash automatic
 * persisted queries send, or sends its text: printed as in the manifest, or any other way (the
 * console's graphql-ws subscription sends its generated text), which is compared in the manifest's
 * normal form (graphql-tools' printExecutableGraphQLDocument, what codegen hashed).
 */
export class TrustedDocuments {
  private readonly byHash = new Map<string, TrustedDocument>();
  /** Texts already compared in normal form, by their own hash: the trusted document's hash, or 0 for none. */
  private readonly normalised = new LRUCache<string, string | 0>({ max: 1_000 });

  constructor(manifest: Readonly<Record<string, string>>) {
    for (const [id, text] of Object.entries(manifest)) {
      const hash = hashOfDocumentId(id);
      if (hash === undefined) throw new Error(`trusted documents: "${id}" is not a sha256:<hex> document id`);
      if (documentHash(text) !== hash) throw new Error(`trusted documents: ${id} is not the SHA-256 of its text`);
      this.byHash.set(hash, { id, hash, text, document: parse(text) });
    }
  }

  /** Reads GraphQL Code Generator's persisted-documents.json files and merges them. */
  static load(files: readonly string[]): TrustedDocuments {
    const manifest: Record<string, string> = {};
    for (const file of files) {
      const entries = JSON.parse(readFileSync(file, 'utf8')) as unknown;
      if (entries === null || typeof entries !== 'object' || Array.isArray(entries)) throw new Error(`trusted documents: ${file} is not a JSON object`);
      for (const [id, text] of Object.entries(entries)) {
        if (typeof text !== 'string') throw new Error(`trusted documents: ${file}: ${id} is not a document text`);
        manifest[id] = text;
      }
    }
    return new TrustedDocuments(manifest);
  }

  get size(): number {
    return this.byHash.size;
  }

  [Symbol.iterator](): IterableIterator<TrustedDocument> {
    return this.byHash.values();
  }

  /** The document named by a GraphQL-over-HTTP `documentId`. */
  byDocumentId(documentId: string): TrustedDocument | undefined {
    const hash = hashOfDocumentId(documentId);
    return hash === undefined ? undefined : this.byHash.get(hash);
  }

  /** The document whose text has this hex SHA-256 (Apollo's query hash, automatic persisted queries). */
  byTextHash(hash: string): TrustedDocument | undefined {
    return this.byHash.get(hash);
  }

  /** The trusted document this text is, as sent or printed another way; undefined for any other text. */
  matching(text: string, hash: string = documentHash(text)): TrustedDocument | undefined {
    const exact = this.byHash.get(hash);
    if (exact) return exact;
    let normalHash = this.normalised.get(hash);
    if (normalHash === undefined) {
      normalHash = normalFormHash(text) ?? 0;
      this.normalised.set(hash, normalHash);
    }
    return normalHash === 0 ? undefined : this.byHash.get(normalHash);
  }
}

function normalFormHash(text: string): string | undefined {
  try {
    return documentHash(printExecutableGraphQLDocument(parse(text, { maxTokens: GRAPHQL_LIMITS.maxTokens })));
  } catch {
    return undefined;
  }
}

/**
 * Apollo's document cache (parsed and validated documents by query hash) with the trusted documents
 * in it from the start, so Apollo never parses or validates one; other documents are cached as Apollo
 * would (at most 1,000). Apollo prefixes keys with its schema's hash: the query hash follows the last colon.
 */
export function documentStoreWith(validated: ReadonlyMap<string, DocumentNode>): DocumentStore {
  const others = new LRUCache<string, DocumentNode>({ max: 1_000 });
  return {
    get: async (key) => validated.get(key.slice(key.lastIndexOf(':') + 1)) ?? others.get(key),
    set: async (key, document) => void others.set(key, document),
    delete: async (key) => others.delete(key),
  };
}

/**
 * The store of Apollo's automatic persisted queries (keys `apq:<hex>`): every trusted document is
 * known by its hash from the start; texts clients register are kept up to 16 MiB (least recently used
 * go first), as in Apollo's own bounded cache.
 */
export function persistedQueryStoreWith(documents: TrustedDocuments): KeyValueStore<string> {
  const registered = new LRUCache<string, string>({ maxSize: 16 * 2 ** 20, sizeCalculation: (text) => Math.max(1, text.length) });
  return {
    get: async (key) => documents.byTextHash(key.slice(key.lastIndexOf(':') + 1))?.text ?? registered.get(key),
    set: async (key, text) => void registered.set(key, text),
    delete: async (key) => registered.delete(key),
  };
}

/** Apollo's KeyValueCache, as its options take one. */
export interface KeyValueStore<V> {
  get(key: string): Promise<V | undefined>;
  set(key: string, value: V, options?: { ttl?: number | null }): Promise<void>;
  delete(key: string): Promise<boolean | void>;
}

export type DocumentStore = KeyValueStore<DocumentNode>;
