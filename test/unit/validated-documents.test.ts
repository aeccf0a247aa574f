import { describe, expect, it } from '@jest/globals';
import { buildSchema, specifiedRules, type ValidationContext, type ValidationRule } from 'graphql';
import { GRAPHQL_LIMITS } from '../../src/platform/graphql/limits.js';
import { VALIDATED_DOCUMENTS, ValidatedDocuments } from '../../src/platform/graphql/validated-documents.js';

const schema = buildSchema(`
  type Query { ok: Boolean, echo(text: String): String }
  type Subscription { ticks: Int }
`);

/** The gateway's rules plus one that counts how often a document is validated. */
function documentsCountingValidations() {
  let validations = 0;
  const counting: ValidationRule = (_context: ValidationContext) => ({ Document: () => void validations++ });
  return { documents: new ValidatedDocuments(schema, [...specifiedRules, counting]), validations: () => validations };
}

const queryNumbered = (n: number) => `query Q${n} { ok }`;

describe('ValidatedDocuments', () => {
  it('parses and validates a text once and hands every operation sending it the same document', () => {
    const { documents, validations } = documentsCountingValidations();
    const first = documents.prepare('subscription { ticks }');
    const again = Array.from({ length: 100 }, () => documents.prepare('subscription { ticks }'));
    expect('document' in first).toBe(true);
    expect(new Set(again.map((prepared) => ('document' in prepared ? prepared.document : undefined)))).toEqual(new Set(['document' in first ? first.document : null]));
    expect(validations()).toBe(1);
  });

  it('answers the errors of a text that fails, each time it comes, and keeps none of them', () => {
    const { documents, validations } = documentsCountingValidations();
    const invalid = documents.prepare('{ nope }');
    expect(invalid).toEqual({ errors: [expect.objectContaining({ message: 'Cannot query field "nope" on type "Query".' })] });
    expect(documents.prepare('{ nope }')).toEqual(invalid);
    expect(validations()).toBe(2);
    expect(documents.prepare('{ ok ')).toEqual({ errors: [expect.objectContaining({ message: expect.stringMatching(/^Syntax Error/) })] });
    const overTokenBound = `{ ${Array.from({ length: GRAPHQL_LIMITS.maxTokens }, () => 'ok').join(' ')} }`;
    expect(documents.prepare(overTokenBound)).toEqual({ errors: [expect.objectContaining({ message: expect.stringMatching(new RegExp(`more tha. ${GRAPHQL_LIMITS.maxTokens} tokens`)) })] });
    expect(documents.size).toBe(0);
  });

  it(`keeps ${VALIDATED_DOCUMENTS.maxEntries} texts, and on one more forgets the one used longest ago`, () => {
    const { documents, validations } = documentsCountingValidations();
    for (let n = 0; n < VALIDATED_DOCUMENTS.maxEntries; n++) documents.prepare(queryNumbered(n));
    documents.prepare(queryNumbered(0)); // used again: now the newest
    expect(documents.size).toBe(VALIDATED_DOCUMENTS.maxEntries);
    expect(validations()).toBe(VALIDATED_DOCUMENTS.maxEntries);
    documents.prepare(queryNumbered(VALIDATED_DOCUMENTS.maxEntries));
    expect(documents.size).toBe(VALIDATED_DOCUMENTS.maxEntries);
    documents.prepare(queryNumbered(0));
    expect(validations()).toBe(VALIDATED_DOCUMENTS.maxEntries + 1);
    documents.prepare(queryNumbered(1)); // the one forgotten
    expect(validations()).toBe(VALIDATED_DOCUMENTS.maxEntries + 2);
  });

  it(`keeps texts up to ${VALIDATED_DOCUMENTS.maxQueryChars.toLocaleString('en')} characters in all, and forgets the oldest past it`, () => {
    const { documents } = documentsCountingValidations();
    // Comments make a text long without tokens: 20 texts of a twentieth of the bound each.
    const padded = (n: number, length: number) => {
      const text = `query P${n} { ok }\n#`;
      return text + 'x'.repeat(length - text.length);
    };
    const share = VALIDATED_DOCUMENTS.maxQueryChars / 20;
    for (let n = 0; n < 20; n++) documents.prepare(padded(n, share));
    expect(documents.size).toBe(20); // exactly at the bound
    documents.prepare(padded(20, 30)); // 30 characters over it
    expect(documents.size).toBe(20);
  });
});
