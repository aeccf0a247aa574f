import { describe, expect, it } from '@jest/globals';
import { buildSchema, getOperationAST, parse, printSchema } from 'graphql';
import { cachePolicyOf } from '../../src/platform/graphql/cache-policy.js';
import { printGatewaySchema } from '../../src/platform/graphql/schema.js';

const schema = buildSchema(`
  directive @cacheControl(maxAge: Int, scope: CacheControlScope, inheritMaxAge: Boolean) on FIELD_DEFINITION | OBJECT | INTERFACE | UNION
  enum CacheControlScope { PUBLIC PRIVATE }
  type Query { prices: [Price!]! cheapest: Price me: Agent news: News @cacheControl(maxAge: 10) }
  type Mutation { touch: Price }
  type Price @cacheControl(maxAge: 60) { slug: String! mine: Boolean @cacheControl(scope: PRIVATE) votedByMe: Boolean @cacheControl(maxAge: 0, scope: PRIVATE) provider: Provider }
  type Provider { name: String }
  type News @cacheControl(maxAge: 300) { title: String }
  type Agent { id: ID! }
`);
const policy = (query: string) => {
  const document = parse(query);
  return cachePolicyOf(schema, document, getOperationAST(document)!);
};

describe('cachePolicyOf (Apollo cache hints, read from the document)', () => {
  it('takes the type hint, leaves inheriting it and the smallest maxAge of all parts', () => {
    expect(policy('{ prices { slug } cheapest { slug } }')).toEqual({ maxAge: 60, scope: 'PUBLIC' });
    expect(policy('{ prices { slug } news { title } }')).toEqual({ maxAge: 10, scope: 'PUBLIC' });
    expect(policy('query Q { ...F } fragment F on Query { prices { slug } }')).toEqual({ maxAge: 60, scope: 'PUBLIC' });
  });

  it('makes an answer private when any field is, and uncacheable when any part has no maxAge', () => {
    expect(policy('{ prices { slug mine } }')).toEqual({ maxAge: 60, scope: 'PRIVATE' });
    expect(policy('{ prices { votedByMe } }')).toEqual({ maxAge: 0, scope: 'PRIVATE' });
    // An unhinted object type (Provider) and an unhinted root field (me) count as maxAge 0.
    expect(policy('{ prices { provider { name } } }')).toEqual({ maxAge: 0, scope: 'PRIVATE' });
    expect(policy('{ me { id } }')).toEqual({ maxAge: 0, scope: 'PRIVATE' });
    expect(policy('{ __typename }')).toEqual({ maxAge: 0, scope: 'PRIVATE' });
  });

  it('never caches a mutation', () => {
    expect(policy('mutation { touch { slug } }')).toEqual({ maxAge: 0, scope: 'PRIVATE' });
  });
});

describe('printGatewaySchema', () => {
  it('prints the applied directives, and otherwise exactly what graphql-js prints', () => {
    const plain = buildSchema('"""A price."""\ntype Query {\n  """One"""\n  a(\n    """x"""\n    x: Int\n\n    """y"""\n    y: Int\n  ): Int\n\n  """Two"""\n  b: String\n}');
    expect(printGatewaySchema(plain)).toBe(`${printSchema(plain)}\n`);
    expect(printGatewaySchema(schema)).toContain('type Price @cacheControl(maxAge: 60) {');
    expect(printGatewaySchema(schema)).toContain('votedByMe: Boolean @cacheControl(maxAge: 0, scope: PRIVATE)');
  });
});
