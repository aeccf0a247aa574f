import { GraphQLError, parse, validate, type DocumentNode, type GraphQLSchema, type ValidationRule } from 'graphql';
import { LRUCache } from 'lru-cache';
import { GRAPHQL_LIMITS } from './limits.js';
import { subscriptionRootConditionErrors } from './subscription-root.js';

/**
 * Query texts whose parsed, validated document is kept: by count, and by the length of their text
 * (a document's syntax tree takes some 20 times its text).
 */
export const VALIDATED_DOCUMENTS = { maxEntries: 1_000, maxQueryChars: 1_000_000 } as const;

/**
 * Documents parsed and validated once per query text, and shared by every operation that sends that
 * text. Over graphql-ws every subscribe message carried its own parse and validation (with the cost,
 * depth and alias rules): 0.5 ms of the 0.7 ms a subscription cost the gateway in bench S10, where
 * 10,000 subscriptions send the same text, and each subscription kept its own syntax tree (6 of the
 * 16 KB it held). Apollo Server keeps such a store for HTTP; this is the same for WebSocket. Only
 * documents that pass are kept: a refused text is parsed and refused again each time it comes.
 */
export class ValidatedDocuments {
  private readonly documents = new LRUCache<string, DocumentNode>({
    max: VALIDATED_DOCUMENTS.maxEntries,
    maxSize: VALIDATED_DOCUMENTS.maxQueryChars,
    sizeCalculation: (_document, query) => Math.max(1, query.length),
  });

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly rules: readonly ValidationRule[],
    /** graphql-js's options (`maxErrors`). */
    private readonly options: { maxErrors?: number } = {},
  ) {}

  /** The document of `query`, or the errors that refuse it (syntax, the token bound, validation). */
  prepare(query: string): { document: DocumentNode } | { errors: readonly GraphQLError[] } {
    const known = this.documents.get(query);
    if (known) return { document: known };
    let document: DocumentNode;
    try {
      document = parse(query, { maxTokens: GRAPHQL_LIMITS.maxTokens });
    } catch (error) {
      if (error instanceof GraphQLError) return { errors: [error] };
      throw error;
    }
    const conditioned = subscriptionRootConditionErrors(document);
    if (conditioned.length > 0) return { errors: conditioned };
    const errors = validate(this.schema, document, this.rules, this.options);
    if (errors.length > 0) return { errors };
    this.documents.set(query, document);
    return { document };
  }

  /** Query texts kept now. */
  get size(): number {
    return this.documents.size;
  }
}
