import {
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  typeFromAST,
  type DocumentNode,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { estimateCost } from './operation-cost.js';

/** Past this many Boolean variables the 2^n combinations are not tried (our pages declare at most two). */
export const MAX_BOOLEAN_VARIABLES = 10;

/**
 * What a document known in advance (the pages' trusted documents, reported by `npm run graphql:costs`) is
 * estimated at, whichever way its `@skip`/`@include` conditions go: every combination of its Boolean
 * variables is estimated and the largest kept (`@include(if: $full)` costs its subtree only when true,
 * `@skip(if: $brief)` only when false). Lists are sized as the page sends them, by their arguments'
 * defaults and `@listSize`; other required variables get a placeholder. Not a bound on what a caller
 * sending other values is charged: a larger `first` costs more, and a null condition is refused.
 */
export function costOverConditions(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): number {
  const base = placeholders(schema, operation);
  const booleans = (operation.variableDefinitions ?? [])
    .filter((definition) => {
      const type = typeFromAST(schema, definition.type) as GraphQLInputType | undefined;
      return type !== undefined && !isListType(getNullableType(type)) && getNamedType(type).name === 'Boolean';
    })
    .map((definition) => definition.variable.name.value);
  if (booleans.length > MAX_BOOLEAN_VARIABLES) throw new Error(`${operation.name?.value ?? 'an operation'} declares ${booleans.length} Boolean variables; the worst case is tried for at most ${MAX_BOOLEAN_VARIABLES}`);
  let worst = 0;
  for (let combination = 0; combination < 2 ** booleans.length; combination++) {
    const variables = { ...base };
    booleans.forEach((name, bit) => (variables[name] = (combination & (1 << bit)) !== 0));
    worst = Math.max(worst, estimateCost(schema, document, operation.name?.value, variables));
  }
  return worst;
}

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
