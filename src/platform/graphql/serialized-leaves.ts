import {
  getNamedType,
  GraphQLBoolean,
  GraphQLFloat,
  GraphQLID,
  GraphQLInt,
  GraphQLString,
  isEnumType,
  isObjectType,
  isScalarType,
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';

/**
 * How to tell that a query's answer, run by graphql-jit with `disableLeafSerialization` (its built-in
 * scalars and enums written as the resolvers gave them), is exactly what the serialising run would
 * have answered: every such leaf is already in its serialised form, a string for `String` and `ID`, a
 * boolean, a 32-bit integer for `Int`, a finite number for `Float`, one of the enum's names. Custom
 * scalars (`DateTimeISO`, `JSON`) are serialised in both runs.
 *
 * Why: graphql-jit serialises a leaf through three calls with its error locations and path built as
 * arrays each time; bench S3's 200 built-in leaves per page cost about 40 µs of its 520 (measured in
 * process, test/measure/graphql-request.ts), and a type check per leaf a few. An answer that fails
 * the check runs again with the serialisers (see CompiledOperations), so no client sees a difference.
 */
export type LeafShape = readonly ShapedField[];

type LeafForm = 'string' | 'boolean' | 'int' | 'float' | ReadonlySet<string>;

interface ShapedField {
  /** Where the answer holds it: its alias, else its name. */
  readonly key: string;
  /** A built-in scalar or enum leaf: the form its serialised value has. */
  readonly form?: LeafForm;
  /** An object field: its selection (several selections of one key merged). */
  readonly shape?: LeafShape;
}

const BUILT_IN_FORMS = new Map<unknown, LeafForm>([
  [GraphQLString, 'string'],
  [GraphQLID, 'string'],
  [GraphQLBoolean, 'boolean'],
  [GraphQLInt, 'int'],
  [GraphQLFloat, 'float'],
]);

class NotCheckable extends Error {}

/**
 * The leaves of a query to check, or undefined when its answer cannot be checked this way: a mutation
 * or subscription, a selection on an interface or union (which object a value is comes from the
 * answer), an enum whose values are not their names (its serialiser renames them).
 */
export function leafShapeOf(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): LeafShape | undefined {
  const root = schema.getQueryType();
  if (operation.operation !== 'query' || !root) return undefined;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  try {
    return freeze(shapeOf(root, operation.selectionSet, fragments, new Map()));
  } catch (error) {
    if (error instanceof NotCheckable) return undefined;
    throw error;
  }
}

interface Building {
  form?: LeafForm;
  shape?: Map<string, Building>;
}

// Every field of the selection, `@skip`/`@include` or not: a field left out is absent from the answer, and absent keys are not checked.
function shapeOf(type: GraphQLObjectType, selectionSet: SelectionSetNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>, into: Map<string, Building>): Map<string, Building> {
  for (const selection of selectionSet.selections) {
    if (selection.kind !== Kind.FIELD) {
      const fragment = selection.kind === Kind.INLINE_FRAGMENT ? selection : fragments.get(selection.name.value);
      if (fragment) shapeOf(type, fragment.selectionSet, fragments, into);
      continue;
    }
    if (selection.name.value === '__typename') continue;
    const field = type.getFields()[selection.name.value];
    if (!field) continue;
    const key = selection.alias?.value ?? selection.name.value;
    const named = getNamedType(field.type);
    if (isObjectType(named) && selection.selectionSet) {
      const entry = into.get(key) ?? { shape: new Map() };
      into.set(key, entry);
      shapeOf(named, selection.selectionSet, fragments, entry.shape!);
    } else if (isEnumType(named)) {
      if (named.getValues().some((value) => value.value !== value.name)) throw new NotCheckable();
      into.set(key, { form: new Set(named.getValues().map((value) => value.name)) });
    } else if (isScalarType(named)) {
      const form = BUILT_IN_FORMS.get(named);
      if (form) into.set(key, { form });
    } else {
      throw new NotCheckable();
    }
  }
  return into;
}

function freeze(building: Map<string, Building>): LeafShape {
  return [...building].flatMap(([key, entry]): ShapedField[] => {
    if (entry.form !== undefined) return [{ key, form: entry.form }];
    const shape = freeze(entry.shape!);
    return shape.length > 0 ? [{ key, shape }] : [];
  });
}

/** Whether every checked leaf of `data` (an object, a list of them, or null) is in its serialised form. */
export function leavesAreSerialized(shape: LeafShape, data: unknown): boolean {
  if (data === null || data === undefined) return true;
  if (Array.isArray(data)) {
    for (const item of data) if (!leavesAreSerialized(shape, item)) return false;
    return true;
  }
  if (typeof data !== 'object') return false;
  const value = data as Record<string, unknown>;
  for (const field of shape) {
    const answer = value[field.key];
    if (answer === null || answer === undefined) continue;
    if (field.shape ? !leavesAreSerialized(field.shape, answer) : !inForm(field.form!, answer)) return false;
  }
  return true;
}

function inForm(form: LeafForm, answer: unknown): boolean {
  if (Array.isArray(answer)) {
    for (const item of answer) if (item !== null && !inForm(form, item)) return false;
    return true;
  }
  switch (form) {
    case 'string':
      return typeof answer === 'string';
    case 'boolean':
      return typeof answer === 'boolean';
    case 'int':
      return Number.isInteger(answer) && (answer as number) >= -2_147_483_648 && (answer as number) <= 2_147_483_647;
    case 'float':
      return typeof answer === 'number' && Number.isFinite(answer);
    default:
      return typeof answer === 'string' && form.has(answer);
  }
}
