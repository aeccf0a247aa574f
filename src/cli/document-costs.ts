import 'reflect-metadata';
import { resolve } from 'node:path';
import {
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  Kind,
  typeFromAST,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { TRUSTED_DOCUMENT_MANIFESTS } from '../app.js';
import { resolverClasses } from '../modules/index.js';
import { estimateCost } from '../platform/graphql/operation-cost.js';
import { buildGatewaySchema } from '../platform/graphql/schema.js';
import { TrustedDocuments } from '../platform/graphql/trusted-documents.js';
import { PACKAGE_ROOT } from '../platform/manifest.js';

// `npm run graphql:costs`: the estimated cost (IBM cost directives, GRAPHQL_COST_PER_MIN's points) of
// every document the pages send, as a Markdown table for docs/graphql.md (Cost). Variables a page always sends and
// that size no list get a placeholder; list sizes come from arguments' defaults and `@listSize`.
const pages = { 'src/web/generated/pages/persisted-documents.json': '/browse, /prices', 'src/web/generated/console/persisted-documents.json': '/console' };
const schema = await buildGatewaySchema({ resolvers: resolverClasses });
const rows: string[] = ['| page | operation | estimated cost |', '| --- | --- | --- |'];
for (const file of TRUSTED_DOCUMENT_MANIFESTS.filter((manifest) => manifest in pages)) {
  for (const trusted of TrustedDocuments.load([resolve(PACKAGE_ROOT, file)])) {
    for (const definition of trusted.document.definitions) {
      if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
      const cost = estimateCost(schema, trusted.document, definition.name?.value, placeholders(schema, definition));
      rows.push(`| ${pages[file as keyof typeof pages]} | ${definition.operation} ${definition.name?.value ?? '(anonymous)'} | ${cost} |`);
    }
  }
}
console.log(rows.join('\n'));

function placeholders(schema: GraphQLSchema, operation: OperationDefinitionNode): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const variable of operation.variableDefinitions ?? []) {
    const type = typeFromAST(schema, variable.type) as GraphQLInputType | undefined;
    if (type && isNonNullType(type) && !variable.defaultValue) values[variable.variable.name.value] = placeholder(type);
  }
  return values;
}

function placeholder(type: GraphQLInputType): unknown {
  const nullable = getNullableType(type);
  if (isListType(nullable)) return [];
  const named = getNamedType(nullable);
  if (isEnumType(named)) return named.getValues()[0]!.value;
  if (isInputObjectType(named)) {
    const fields: Record<string, unknown> = {};
    for (const field of Object.values(named.getFields())) if (isNonNullType(field.type) && field.defaultValue === undefined) fields[field.name] = placeholder(field.type);
    return fields;
  }
  const scalars: Record<string, unknown> = { Int: 1, Float: 1, Boolean: false, ID: '00000000-0000-0000-0000-000000000000', String: 'x', DateTimeISO: new Date('2030-01-01T00:00:00Z'), JSONObject: {} };
  return scalars[named.name] ?? 'x';
}
