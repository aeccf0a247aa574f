import { loadModule, parsePlPgSQLSync, parseSync, scanSync } from 'libpg-query';

/**
 * The rule: in a SELECT, an ORDER BY, GROUP BY or DISTINCT ON item that is a bare name equal to an
 * output column's name, where that output column is not that same plain column, is a mistake waiting
 * to happen. PostgreSQL resolves a bare ORDER BY / DISTINCT ON name to the output column first (so
 * `select id::text … order by id` sorts text: 10 before 9) and a bare GROUP BY name to the input column
 * first (so the same words group by something else than they order by). Which column is meant is
 * said by qualifying it (`order by e.id`) or by not reusing the name.
 *
 * Statements are read by PostgreSQL's own parser (libpg_query, as WebAssembly), PL/pgSQL bodies by
 * its PL/pgSQL parser, and output names follow PostgreSQL's `FigureColname` (parse_target.c), so the
 * implicit name of `id::text` is `id`, of `count(*)` `count`, of `coalesce(…)` `coalesce`.
 */
export interface ShadowedName {
  clause: 'ORDER BY' | 'GROUP BY' | 'DISTINCT ON';
  /** The bare name the clause uses. */
  name: string;
  /** The select-list item it resolves to (or competes with), as written. */
  outputColumn: string;
}

type Node = Record<string, unknown>;

const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && !Array.isArray(value);
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
/** The payload of a wrapped node (`{ColumnRef: {...}}` → `{...}`) when it is of that kind. */
const nodeOf = (value: unknown, kind: string): Node | undefined => (isNode(value) && isNode(value[kind]) ? value[kind] : undefined);
const stringValue = (value: unknown): string | undefined => {
  const string = nodeOf(value, 'String');
  return typeof string?.sval === 'string' ? string.sval : undefined;
};

/** Loads the WebAssembly parser (once; the parse functions below are synchronous). */
export const loadSqlParser: () => Promise<void> = loadModule;

const FIXED_NAMES: Record<string, string> = {
  GroupingFunc: 'grouping',
  MergeSupportFunc: 'merge_action',
  A_ArrayExpr: 'array',
  RowExpr: 'row',
  CoalesceExpr: 'coalesce',
  XmlSerialize: 'xmlserialize',
  JsonParseExpr: 'json',
  JsonScalarExpr: 'json_scalar',
  JsonSerializeExpr: 'json_serialize',
  JsonObjectConstructor: 'json_object',
  JsonArrayConstructor: 'json_array',
  JsonArrayQueryConstructor: 'json_array',
  JsonObjectAgg: 'json_objectagg',
  JsonArrayAgg: 'json_arrayagg',
};
const SQL_VALUE_FUNCTION_NAMES: Record<string, string> = {
  SVFOP_CURRENT_DATE: 'current_date',
  SVFOP_CURRENT_TIME: 'current_time',
  SVFOP_CURRENT_TIME_N: 'current_time',
  SVFOP_CURRENT_TIMESTAMP: 'current_timestamp',
  SVFOP_CURRENT_TIMESTAMP_N: 'current_timestamp',
  SVFOP_LOCALTIME: 'localtime',
  SVFOP_LOCALTIME_N: 'localtime',
  SVFOP_LOCALTIMESTAMP: 'localtimestamp',
  SVFOP_LOCALTIMESTAMP_N: 'localtimestamp',
  SVFOP_CURRENT_ROLE: 'current_role',
  SVFOP_CURRENT_USER: 'current_user',
  SVFOP_USER: 'user',
  SVFOP_SESSION_USER: 'session_user',
  SVFOP_CURRENT_CATALOG: 'current_catalog',
  SVFOP_CURRENT_SCHEMA: 'current_schema',
};
const XML_NAMES: Record<string, string> = {
  IS_XMLCONCAT: 'xmlconcat',
  IS_XMLELEMENT: 'xmlelement',
  IS_XMLFOREST: 'xmlforest',
  IS_XMLPARSE: 'xmlparse',
  IS_XMLPI: 'xmlpi',
  IS_XMLROOT: 'xmlroot',
  IS_XMLSERIALIZE: 'xmlserialize',
};
const JSON_FUNCTION_NAMES: Record<string, string> = { JSON_EXISTS_OP: 'json_exists', JSON_QUERY_OP: 'json_query', JSON_VALUE_OP: 'json_value' };

/**
 * PostgreSQL's implicit output name of an expression with its strength (2: a real name, 1: a
 * fallback such as a cast's type name), after FigureColnameInternal; 0 when it has none (`?column?`).
 */
function figureColumnName(expression: unknown): [name: string | undefined, strength: number] {
  if (!isNode(expression)) return [undefined, 0];
  const [kind, node] = Object.entries(expression)[0] ?? [];
  if (!kind || !isNode(node)) return [undefined, 0];
  if (kind in FIXED_NAMES) return [FIXED_NAMES[kind], 2];
  switch (kind) {
    case 'ColumnRef': {
      const name = list(node.fields).map(stringValue).filter((field) => field !== undefined).at(-1);
      return name ? [name, 2] : [undefined, 0];
    }
    case 'A_Indirection': {
      const name = list(node.indirection).map(stringValue).filter((field) => field !== undefined).at(-1);
      return name ? [name, 2] : figureColumnName(node.arg);
    }
    case 'FuncCall':
      return [stringValue(list(node.funcname).at(-1)), 2];
    case 'A_Expr':
      return node.kind === 'AEXPR_NULLIF' ? ['nullif', 2] : [undefined, 0];
    case 'TypeCast': {
      const [name, strength] = figureColumnName(node.arg);
      if (strength > 1) return [name, strength];
      const typeName = isNode(node.typeName) ? stringValue(list(node.typeName.names).at(-1)) : undefined;
      return typeName ? [typeName, 1] : [name, strength];
    }
    case 'CollateClause':
      return figureColumnName(node.arg);
    case 'SubLink':
      if (node.subLinkType === 'EXISTS_SUBLINK') return ['exists', 2];
      if (node.subLinkType === 'ARRAY_SUBLINK') return ['array', 2];
      if (node.subLinkType === 'EXPR_SUBLINK') return [outputNames(nodeOf(node.subselect, 'SelectStmt'))[0]?.name ?? '?column?', 2];
      return [undefined, 0];
    case 'CaseExpr': {
      const [name, strength] = figureColumnName(node.defresult);
      return strength > 1 ? [name, strength] : ['case', 1];
    }
    case 'MinMaxExpr':
      return [node.op === 'IS_GREATEST' ? 'greatest' : 'least', 2];
    case 'SQLValueFunction':
      return [SQL_VALUE_FUNCTION_NAMES[String(node.op)], 2];
    case 'XmlExpr':
      return String(node.op) in XML_NAMES ? [XML_NAMES[String(node.op)], 2] : [undefined, 0];
    case 'JsonFuncExpr':
      return [JSON_FUNCTION_NAMES[String(node.op)], 2];
    default:
      return [undefined, 0];
  }
}

interface OutputColumn {
  name: string | undefined;
  expression: unknown;
  location: number;
}

/** The output columns of a SELECT (of its first branch for UNION and the like), as PostgreSQL names them. */
function outputNames(select: Node | undefined): OutputColumn[] {
  let plain = select;
  while (plain && plain.op && plain.op !== 'SETOP_NONE') plain = isNode(plain.larg) ? plain.larg : undefined;
  return list(plain?.targetList).flatMap((item) => {
    const target = nodeOf(item, 'ResTarget');
    if (!target) return [];
    const name = typeof target.name === 'string' ? target.name : figureColumnName(target.val)[0];
    return [{ name, expression: target.val, location: typeof target.location === 'number' ? target.location : 0 }];
  });
}

/** The name of a bare, unqualified column reference (`id`, not `e.id`). */
function bareName(expression: unknown): string | undefined {
  const fields = list(nodeOf(expression, 'ColumnRef')?.fields);
  return fields.length === 1 ? stringValue(fields[0]) : undefined;
}

/** Whether an output column is the plain input column of that name (`id`, `e.id`, `e.id as id`). */
function isPlainColumn(column: OutputColumn, name: string): boolean {
  const fields = list(nodeOf(column.expression, 'ColumnRef')?.fields);
  return fields.length > 0 && stringValue(fields.at(-1)) === name;
}

function groupingItems(items: unknown[]): unknown[] {
  return items.flatMap((item) => {
    const set = nodeOf(item, 'GroupingSet');
    return set ? groupingItems(list(set.content)) : [item];
  });
}

// The keywords that end a select-list item (with `,`, `;` and an unmatched `)`).
const AFTER_SELECT_LIST = new Set(['from', 'into', 'where', 'group', 'having', 'window', 'order', 'limit', 'offset', 'fetch', 'for', 'union', 'intersect', 'except']);

/** A select-list item as written (`id::text`, `count(*) as n`), read with PostgreSQL's scanner. */
function excerpt(sql: string, location: number): string {
  // Parser and scanner locations count bytes of UTF-8.
  const bytes = Buffer.from(sql);
  let depth = 0;
  let end = location;
  for (const token of scanSync(sql).tokens) {
    if (token.start < location) continue;
    if (token.text === '(' || token.text === '[') depth++;
    else if (token.text === ')' || token.text === ']') depth--;
    if (depth < 0 || (depth === 0 && (token.text === ',' || token.text === ';' || AFTER_SELECT_LIST.has(token.text.toLowerCase())))) break;
    end = token.end;
  }
  return bytes.subarray(location, end).toString().replace(/\s+/g, ' ');
}

function checkSelect(select: Node, sql: string, found: ShadowedName[]): void {
  // The ORDER BY of a UNION (or INTERSECT, EXCEPT) can name only output columns: nothing to shadow.
  if (select.op && select.op !== 'SETOP_NONE') return;
  const columns = outputNames(select);
  const items: [ShadowedName['clause'], unknown][] = [
    ...list(select.sortClause).map((item): [ShadowedName['clause'], unknown] => ['ORDER BY', nodeOf(item, 'SortBy')?.node]),
    ...groupingItems(list(select.groupClause)).map((item): [ShadowedName['clause'], unknown] => ['GROUP BY', item]),
    // Plain DISTINCT is a list holding one empty node; DISTINCT ON lists its expressions.
    ...list(select.distinctClause).map((item): [ShadowedName['clause'], unknown] => ['DISTINCT ON', item]),
  ];
  for (const [clause, item] of items) {
    const name = bareName(item);
    if (name === undefined) continue;
    for (const column of columns) {
      if (column.name === name && !isPlainColumn(column, name)) found.push({ clause, name, outputColumn: excerpt(sql, column.location) });
    }
  }
}

function walk(node: unknown, visit: (kind: string, payload: Node) => void): void {
  if (Array.isArray(node)) {
    for (const item of node) walk(item, visit);
    return;
  }
  if (!isNode(node)) return;
  for (const [key, value] of Object.entries(node)) {
    if (isNode(value)) visit(key, value);
    walk(value, visit);
  }
}

/** Every shadowed name in one or more SQL statements (subqueries, CTEs and set operations included). */
export function findShadowedNames(sql: string): ShadowedName[] {
  const found: ShadowedName[] = [];
  walk(parseSync(sql), (kind, payload) => {
    // The branches of a UNION are SELECTs too, held unwrapped.
    if (kind === 'SelectStmt' || kind === 'larg' || kind === 'rarg') checkSelect(payload, sql, found);
  });
  return found;
}

// libpg_query's parse modes (RawParseMode) of PL/pgSQL's SQL: a whole statement, an expression; else an assignment.
const RAW_PARSE_DEFAULT = 0;
const RAW_PARSE_PLPGSQL_EXPR = 2;

/**
 * The SQL inside a PL/pgSQL function (its whole `create function` text, as `pg_get_functiondef` gives
 * it), each as a statement the SQL parser can read: expressions (`if …`, `return …`) become
 * `select <expression>`, assignments `select <right-hand side>`. `dynamic` counts the statements whose
 * text exists only at run time (`EXECUTE …`), which no check can read.
 */
export function plpgsqlStatements(definition: string): { statements: string[]; dynamic: number } {
  const statements: string[] = [];
  let dynamic = 0;
  walk(parsePlPgSQLSync(definition), (kind, payload) => {
    // EXECUTE, FOR … IN EXECUTE, OPEN … FOR EXECUTE, RETURN QUERY EXECUTE.
    if (kind === 'PLpgSQL_stmt_dynexecute' || kind === 'PLpgSQL_stmt_dynfors' || isNode(payload.dynquery)) dynamic++;
    if (kind !== 'PLpgSQL_expr' || typeof payload.query !== 'string') return;
    const query = payload.query;
    const mode = typeof payload.parseMode === 'number' ? payload.parseMode : RAW_PARSE_DEFAULT;
    if (mode === RAW_PARSE_DEFAULT) statements.push(query);
    else if (mode === RAW_PARSE_PLPGSQL_EXPR) statements.push(`select ${query}`);
    else {
      // `target := expression` (or `=`); a target is a variable with fields or subscripts, never an operator.
      const operator = /:=|=/.exec(query);
      statements.push(`select ${operator ? query.slice(operator.index + operator[0].length) : query}`);
    }
  });
  return { statements, dynamic };
}
