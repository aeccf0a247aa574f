import {
  getDirectiveValues,
  getNamedType,
  getNullableType,
  getVariableValues,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  isCompositeType,
  isListType,
  isObjectType,
  Kind,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { getComplexity, type ComplexityEstimatorArgs } from 'graphql-query-complexity';
import { costDirective, listSizeDirective, type ListSize } from './directives.js';
import { fragmentsOf } from './document-fragments.js';

/**
 * What an operation costs, after IBM's GraphQL Cost Directives specification, from the schema's
 * `@cost` and `@listSize`: an object costs 1 and a scalar or enum 0 unless `@cost` says otherwise
 * (on the field, else on its type); a mutation's root field costs 10; an argument with `@cost` adds its
 * weight when set; a list multiplies its items' cost by its size. The estimate (before execution) takes
 * sizes from `@listSize` (the slicing argument's value, else the assumed size); the actual cost (after)
 * walks the answer and counts what was resolved, list lengths as they came.
 *
 * The estimate is graphql-query-complexity's traversal (fragments, `@skip`/`@include`, arguments from
 * variables) with an estimator for the IBM directives. Its estimator sees a field's children as one sum,
 * so the sizes of `sizedFields` (a connection's `edges`) are applied from the costs recorded for those
 * children as they were estimated.
 */

/** A list without `@listSize` (every composite list of the schema has one; a test holds that). */
export const DEFAULT_LIST_SIZE = 10;
/** The weight of a mutation's root field (IBM's specification and Apollo's demand control). */
export const MUTATION_ROOT_WEIGHT = 10;

interface FieldCost {
  /** The field's cost as the estimator returned it. */
  readonly total: number;
  /** One item's cost, for a list. */
  readonly perItem: number;
}

interface EstimateContext {
  readonly schema: GraphQLSchema;
  readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  readonly costs: Map<FieldNode, FieldCost>;
}

/** The estimated cost of the operation named `operationName` (or the document's only one). */
export function estimateCost(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined, variables: Record<string, unknown> | undefined): number {
  const context: EstimateContext = { schema, fragments: fragmentsOf(document), costs: new Map() };
  return getComplexity({
    schema,
    query: document,
    ...(operationName ? { operationName } : {}),
    variables: variables ?? {},
    context: context as unknown as Record<string, unknown>,
    estimators: [ibmEstimator],
  });
}

function ibmEstimator({ type, field, node, args, childComplexity, context }: ComplexityEstimatorArgs): number {
  const { schema, fragments, costs } = context as unknown as EstimateContext;
  const weight = fieldWeight(schema, type as GraphQLNamedType, field) + argumentWeights(field, args);
  const size = listSizeOf(field);
  let children = childComplexity;
  let multiplier = isListType(getNullableType(field.type)) ? DEFAULT_LIST_SIZE : 1;
  if (size) {
    const items = itemsOf(size, args);
    if (size.sizedFields?.length) {
      for (const child of childFields(node.selectionSet, size.sizedFields, fragments)) {
        const recorded = costs.get(child);
        if (recorded) children += items * recorded.perItem - recorded.total;
      }
    } else {
      multiplier = items;
    }
  }
  const perItem = weight + children;
  costs.set(node, { total: multiplier * perItem, perItem });
  return multiplier * perItem;
}

/** The cost of what an operation actually resolved: its answer's `data`, walked with the operation. */
export function actualCost(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, variables: Record<string, unknown> | undefined, data: unknown): number {
  const root = operation.operation === 'mutation' ? schema.getMutationType() : operation.operation === 'subscription' ? schema.getSubscriptionType() : schema.getQueryType();
  if (!root || data === null || typeof data !== 'object') return 0;
  const walk = walkOf(schema, document, operation, variables);
  return selectionCost(walk, planOf(walk, operation.selectionSet, root), data as Record<string, unknown>);
}

interface Walk {
  readonly schema: GraphQLSchema;
  readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  readonly variables: Record<string, unknown>;
  /** The fields each selection set selects on each type, with their weights: worked out once per walk, not once per row. */
  readonly plans: Map<SelectionSetNode, Map<GraphQLObjectType, readonly PlannedField[]>>;
}

/**
 * The walks of operations that declare no variables, by operation (a cached document's nodes are the
 * same objects from one request to the next) and schema. Which fields such an operation selects and what
 * each weighs depend on the document alone (`@skip`/`@include` and arguments can only be literals), so
 * their plans are worked out once, not on every answer: they were 3 % of bench S3's server CPU.
 */
const fixedWalks = new WeakMap<OperationDefinitionNode, WeakMap<GraphQLSchema, Walk>>();

function walkOf(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, variables: Record<string, unknown> | undefined): Walk {
  if (operation.variableDefinitions?.length) {
    // As execution read them: defaults filled in (`@include(if: $full)` with `$full: Boolean = false` sent
    // without it). Variables that do not coerce answered no data, so nothing is walked with them.
    const coerced = getVariableValues(schema, operation.variableDefinitions, variables ?? {});
    return { schema, fragments: fragmentsOf(document), variables: coerced.coerced ?? variables ?? {}, plans: new Map() };
  }
  let bySchema = fixedWalks.get(operation);
  if (!bySchema) fixedWalks.set(operation, (bySchema = new WeakMap()));
  let walk = bySchema.get(schema);
  if (!walk) bySchema.set(schema, (walk = { schema, fragments: fragmentsOf(document), variables: {}, plans: new Map() }));
  return walk;
}

interface PlannedField {
  readonly node: FieldNode;
  /** Where the answer holds it: its alias, else its name. */
  readonly key: string;
  readonly type: GraphQLNamedType;
  readonly weight: number;
  /** `leaf`: it costs its weight when not null; `object`: plus its selection's cost on its type; `abstract`: on the answer's type. */
  readonly kind: 'leaf' | 'object' | 'abstract';
  /** An `object` field's selection, planned when first walked (then once per row is one property read). */
  selection?: readonly PlannedField[];
}

/**
 * The fields of `selectionSet` that can cost something on `type`. A leaf weighing 0 is left out: it adds
 * nothing, null or not, and a page's rows are mostly such leaves (bench S3's 50 rows have 4 of their 5
 * fields so): the walk visits each row's objects only.
 */
function planOf(walk: Walk, selectionSet: SelectionSetNode, type: GraphQLObjectType): readonly PlannedField[] {
  let byType = walk.plans.get(selectionSet);
  if (!byType) walk.plans.set(selectionSet, (byType = new Map()));
  let plan = byType.get(type);
  if (!plan) {
    plan = fieldsOf(walk, selectionSet, type).flatMap((node): PlannedField[] => {
      const field = type.getFields()[node.name.value];
      if (!field) return [];
      const weight = fieldWeight(walk.schema, type, field) + argumentWeights(field, argumentsOf(node, walk.variables));
      const named = getNamedType(field.type);
      const kind = !node.selectionSet || !isCompositeType(named) ? 'leaf' : isObjectType(named) ? 'object' : 'abstract';
      if (kind === 'leaf' && weight === 0) return [];
      return [{ node, key: node.alias?.value ?? node.name.value, type: named, weight, kind }];
    });
    byType.set(type, plan);
  }
  return plan;
}

function selectionCost(walk: Walk, plan: readonly PlannedField[], value: Record<string, unknown>): number {
  let total = 0;
  for (const planned of plan) {
    const answer = value[planned.key];
    if (answer !== undefined) total += valueCost(walk, planned, answer);
  }
  return total;
}

function valueCost(walk: Walk, planned: PlannedField, answer: unknown): number {
  if (answer === null) return 0;
  if (Array.isArray(answer)) {
    let sum = 0;
    for (const item of answer) sum += valueCost(walk, planned, item);
    return sum;
  }
  if (planned.kind === 'leaf' || typeof answer !== 'object') return planned.weight;
  const selectionSet = planned.node.selectionSet!;
  if (planned.kind === 'object') {
    planned.selection ??= planOf(walk, selectionSet, planned.type as GraphQLObjectType);
    return planned.weight + selectionCost(walk, planned.selection, answer as Record<string, unknown>);
  }
  const runtime = runtimeType(walk.schema, planned.type.name, answer as Record<string, unknown>);
  return planned.weight + (runtime ? selectionCost(walk, planOf(walk, selectionSet, runtime), answer as Record<string, unknown>) : 0);
}

/** An abstract type's object by its `__typename` when the answer has it (the schema has none today). */
function runtimeType(schema: GraphQLSchema, abstractName: string, answer: Record<string, unknown>): GraphQLObjectType | undefined {
  const named = typeof answer.__typename === 'string' ? schema.getType(answer.__typename) : undefined;
  if (named && isObjectType(named)) return named;
  const abstract = schema.getType(abstractName);
  return abstract && !isObjectType(abstract) && isCompositeType(abstract) ? schema.getPossibleTypes(abstract)[0] : undefined;
}

/** The field nodes a selection set selects on `type`: fragments whose condition it meets, skipped ones left out. */
function fieldsOf(walk: Walk, selectionSet: SelectionSetNode, type: GraphQLObjectType): FieldNode[] {
  const fields: FieldNode[] = [];
  for (const selection of selectionSet.selections) {
    if (!included(selection, walk.variables)) continue;
    if (selection.kind === Kind.FIELD) fields.push(selection);
    else {
      const fragment = selection.kind === Kind.INLINE_FRAGMENT ? selection : walk.fragments.get(selection.name.value);
      if (!fragment) continue;
      const condition = fragment.typeCondition?.name.value;
      if (condition === undefined || condition === type.name || type.getInterfaces().some((face) => face.name === condition) || isMemberOfUnion(walk.schema, condition, type)) {
        fields.push(...fieldsOf(walk, fragment.selectionSet, type));
      }
    }
  }
  return fields;
}

function isMemberOfUnion(schema: GraphQLSchema, name: string, type: GraphQLObjectType): boolean {
  const union = schema.getType(name);
  return Boolean(union && !isObjectType(union) && isCompositeType(union) && schema.isSubType(union, type));
}

function included(selection: SelectionSetNode['selections'][number], variables: Record<string, unknown>): boolean {
  // A null `if` never gets here: the admission refuses it (operation-costs.ts).
  if (getDirectiveValues(GraphQLSkipDirective, selection, variables)?.if === true) return false;
  return getDirectiveValues(GraphQLIncludeDirective, selection, variables)?.if !== false;
}

/** The direct child fields named in `names`, through fragments. */
function childFields(selectionSet: SelectionSetNode | undefined, names: readonly string[], fragments: ReadonlyMap<string, FragmentDefinitionNode>): FieldNode[] {
  if (!selectionSet) return [];
  const found: FieldNode[] = [];
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      if (names.includes(selection.name.value)) found.push(selection);
    } else {
      const fragment = selection.kind === Kind.INLINE_FRAGMENT ? selection : fragments.get(selection.name.value);
      found.push(...childFields(fragment?.selectionSet, names, fragments));
    }
  }
  return found;
}

function fieldWeight(schema: GraphQLSchema, parent: GraphQLNamedType, field: GraphQLField<unknown, unknown>): number {
  const own = weightOf(field.astNode);
  if (own !== undefined) return own;
  if (parent === schema.getMutationType()) return MUTATION_ROOT_WEIGHT;
  const type = getNamedType(field.type);
  return weightOf(type.astNode) ?? (isCompositeType(type) ? 1 : 0);
}

function argumentWeights(field: GraphQLField<unknown, unknown>, args: Record<string, unknown>): number {
  let weight = 0;
  for (const argument of field.args) if (args[argument.name] !== undefined) weight += weightOf(argument.astNode) ?? 0;
  return weight;
}

function weightOf(node: Parameters<typeof getDirectiveValues>[1] | null | undefined): number | undefined {
  if (!node) return undefined;
  const weight = (getDirectiveValues(costDirective, node) as { weight?: string } | undefined)?.weight;
  const parsed = weight === undefined ? Number.NaN : Number(weight);
  return Number.isFinite(parsed) && parsed >= 0 ? parsed : undefined;
}

function listSizeOf(field: GraphQLField<unknown, unknown>): ListSize | undefined {
  return field.astNode ? (getDirectiveValues(listSizeDirective, field.astNode) as ListSize | undefined) : undefined;
}

function itemsOf(size: ListSize, args: Record<string, unknown>): number {
  const sliced = (size.slicingArguments ?? []).map((name) => args[name]).filter((value): value is number => typeof value === 'number' && value >= 0);
  if (sliced.length > 0) return Math.max(...sliced);
  return size.assumedSize ?? DEFAULT_LIST_SIZE;
}

function argumentsOf(node: FieldNode, variables: Record<string, unknown>): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const argument of node.arguments ?? []) {
    values[argument.name.value] = argument.value.kind === Kind.VARIABLE ? variables[argument.value.name.value] : argument.value.kind === Kind.NULL ? undefined : true;
  }
  return values;
}

