import {
  getNamedType,
  GraphQLError,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  isSpecifiedScalarType,
  Kind,
  type DocumentNode,
  type ExecutionResult,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLLeafType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { fragmentsOf } from './document-fragments.js';

/**
 * Built-in leaves checked, not serialised. graphql-jit compiled with `disableLeafSerialization` writes
 * the `String`, `ID`, `Int`, `Float`, `Boolean` and enum leaves of an answer as the resolvers gave them;
 * here the answer is checked leaf by leaf against what serialising writes (a string for `String` and
 * `ID`, a 32-bit integer for `Int`, a finite number for `Float`, a boolean, one of the enum's names).
 * The rare answer with a leaf in another form (a resolver gave a number for an `ID`, say) is serialised
 * here afterwards, in place, by the leaf type's own `serialize`: a value it refuses becomes null with a
 * field error, and a null in a non-null place nulls the nearest nullable parent, as in execution.
 * Nothing runs twice. Custom scalars (`DateTimeISO`, `JSON`) are serialised by graphql-jit either way.
 *
 * Why: graphql-jit serialises each leaf through three calls that build its error locations and path as
 * arrays; bench S3's 200 built-in leaves per page cost about 5 % of the request's CPU (in process,
 * test/measure/graphql-request.ts), the check a few microseconds.
 */
export type LeafShape = readonly ShapedField[];

type LeafForm = 'string' | 'boolean' | 'int' | 'float' | ReadonlySet<string>;

interface ShapedField {
  /** Where the answer holds it: its alias, else its name. */
  readonly key: string;
  /** The field's type, wrappers and all: where lists are and which places may not be null. */
  readonly type: GraphQLOutputType;
  /** The selections of this key (their locations go into a field error). */
  readonly nodes: readonly FieldNode[];
  /** A built-in scalar or enum leaf: its type, and the form its serialised value has. */
  readonly leaf?: { readonly type: GraphQLLeafType; readonly form: LeafForm };
  /** An object field: its selection (every selection of the key merged). */
  readonly shape?: LeafShape;
  /** Whether a value of this key (not undefined) is in its serialised form, wrappers and all. */
  readonly isSerialized: (answer: unknown) => boolean;
}

// graphql-jit leaves a scalar unserialised by its name (`isSpecifiedScalarType`): so is its form chosen here.
const BUILT_IN_FORMS: Readonly<Record<string, LeafForm>> = { String: 'string', ID: 'string', Boolean: 'boolean', Int: 'int', Float: 'float' };

class NotCheckable extends Error {}

/**
 * The leaves of a query to check, or undefined when its answer cannot be checked this way: a mutation
 * or subscription, a selection on an interface or union (which object a value is comes from the
 * answer), an enum whose values are not their names (its serialiser renames them).
 */
export function leafShapeOf(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): LeafShape | undefined {
  const root = schema.getQueryType();
  if (operation.operation !== 'query' || !root) return undefined;
  const fragments = fragmentsOf(document);
  try {
    return freeze(shapeOf(root, operation.selectionSet, fragments, new Map()));
  } catch (error) {
    if (error instanceof NotCheckable) return undefined;
    throw error;
  }
}

interface Building {
  type: GraphQLOutputType;
  nodes: FieldNode[];
  leaf?: { type: GraphQLLeafType; form: LeafForm };
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
    const entry = into.get(key) ?? { type: field.type, nodes: [] };
    into.set(key, entry);
    entry.nodes.push(selection);
    if (isObjectType(named) && selection.selectionSet) {
      shapeOf(named, selection.selectionSet, fragments, (entry.shape ??= new Map()));
    } else if (isEnumType(named)) {
      if (named.getValues().some((value) => value.value !== value.name)) throw new NotCheckable();
      entry.leaf = { type: named, form: new Set(named.getValues().map((value) => value.name)) };
    } else if (isScalarType(named)) {
      if (isSpecifiedScalarType(named)) entry.leaf = { type: named, form: BUILT_IN_FORMS[named.name]! };
    } else {
      throw new NotCheckable();
    }
  }
  return into;
}

function freeze(building: Map<string, Building>): LeafShape {
  return [...building].flatMap(([key, entry]): ShapedField[] => {
    if (entry.leaf) {
      const form = entry.leaf.form;
      return [{ key, type: entry.type, nodes: entry.nodes, leaf: entry.leaf, isSerialized: checkOf(entry.type, (answer) => inForm(form, answer)) }];
    }
    const shape = entry.shape ? freeze(entry.shape) : [];
    if (shape.length === 0) return [];
    return [{ key, type: entry.type, nodes: entry.nodes, shape, isSerialized: checkOf(entry.type, (answer) => objectIsSerialized(shape, answer as Record<string, unknown>)) }];
  });
}

/**
 * The check of a field's values, its wrappers unwrapped once, when the query is compiled: walking
 * `NonNull` and `List` for every value was most of the check's time (bench S3's page: 6.5 → 4.9 µs, isolated).
 */
function checkOf(type: GraphQLOutputType, content: (answer: unknown) => boolean): (answer: unknown) => boolean {
  // A null already there was answered by execution (with its error, if it had one).
  if (isNonNullType(type)) return checkOf(type.ofType, content);
  if (isListType(type)) {
    const item = checkOf(type.ofType, content);
    // graphql-jit answers a list field with an array (or null) in either mode.
    return (answer) => {
      if (answer === null) return true;
      const items = answer as unknown[];
      for (let index = 0; index < items.length; index++) if (!item(items[index])) return false;
      return true;
    };
  }
  return (answer) => answer === null || content(answer);
}

/** Whether every checked leaf of `data` (the answer's `data`) is in its serialised form. */
export function leavesAreSerialized(shape: LeafShape, data: unknown): boolean {
  return data === null || data === undefined || objectIsSerialized(shape, data as Record<string, unknown>);
}

function objectIsSerialized(shape: LeafShape, value: Record<string, unknown>): boolean {
  for (let index = 0; index < shape.length; index++) {
    const field = shape[index]!;
    const answer = value[field.key];
    if (answer !== undefined && !field.isSerialized(answer)) return false;
  }
  return true;
}

function inForm(form: LeafForm, answer: unknown): boolean {
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

/** A value refused by its leaf's `serialize` in a place that may not be null: its nearest nullable parent becomes null. */
const REFUSED = Symbol('refused');
type Path = readonly (string | number)[];

/**
 * Serialises, in place, the leaves of `result.data` that are not in their serialised form, as
 * execution would have: the leaf type's `serialize`, and for a value it refuses a field error and
 * null (bubbling up to the nearest nullable place).
 */
export function serializeLeaves(shape: LeafShape, result: ExecutionResult): ExecutionResult {
  if (result.data === null || result.data === undefined) return result;
  const errors: GraphQLError[] = [];
  const data = serializeObject(shape, result.data as Record<string, unknown>, [], errors);
  if (errors.length === 0) return result;
  return { ...result, data: data === REFUSED ? null : data, errors: [...(result.errors ?? []), ...errors] };
}

function serializeObject(shape: LeafShape, value: Record<string, unknown>, path: Path, errors: GraphQLError[]): Record<string, unknown> | typeof REFUSED {
  for (const field of shape) {
    const answer = value[field.key];
    if (answer === undefined) continue;
    const serialized = serializePlace(field, field.type, answer, [...path, field.key], errors);
    if (serialized === REFUSED) return REFUSED;
    value[field.key] = serialized;
  }
  return value;
}

/** A value in a place of `type`: REFUSED when it had to be null and the place may not be. */
function serializePlace(field: ShapedField, type: GraphQLOutputType, answer: unknown, path: Path, errors: GraphQLError[]): unknown {
  // A null already there was answered by execution (with its error, if it had one).
  if (answer === null) return null;
  if (isNonNullType(type)) return serializeContent(field, type.ofType, answer, path, errors);
  const serialized = serializeContent(field, type, answer, path, errors);
  return serialized === REFUSED ? null : serialized;
}

function serializeContent(field: ShapedField, type: GraphQLOutputType, answer: unknown, path: Path, errors: GraphQLError[]): unknown {
  if (isListType(type)) {
    const items = answer as unknown[];
    for (let index = 0; index < items.length; index++) {
      const item = serializePlace(field, type.ofType, items[index], [...path, index], errors);
      if (item === REFUSED) return REFUSED;
      items[index] = item;
    }
    return items;
  }
  if (!field.leaf) return serializeObject(field.shape!, answer as Record<string, unknown>, path, errors);
  if (inForm(field.leaf.form, answer)) return answer;
  try {
    const serialized = field.leaf.type.serialize(answer);
    if (serialized === undefined || Number.isNaN(serialized)) throw new Error(`Expected a value of type "${field.leaf.type.name}" but received: ${String(answer)}`);
    return serialized;
  } catch (error) {
    errors.push(new GraphQLError((error as Error).message, { nodes: field.nodes, path, ...(error instanceof Error ? { originalError: error } : {}) }));
    return REFUSED;
  }
}
