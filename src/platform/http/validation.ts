import { Ajv, type ErrorObject, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, FastifySchemaValidationError } from 'fastify';
import secureJson from 'secure-json-parse';
import { AppError, type FieldErrors } from '../errors.js';
import { isRfc3339DateTime } from '../iso-time.js';
import { holdsNul, UNSTORABLE_TEXT_MESSAGE } from '../unstorable-text.js';

// ajv-formats is CommonJS with a default export; under NodeNext the callable sits on `.default`.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

const common: Options = {
  allErrors: true,
  strict: false,
  useDefaults: true,
  // Bodies are never silently changed: unknown properties are errors where a schema closes the
  // object (`additionalProperties: false`), never stripped.
  removeAdditional: false,
  // Errors carry their schema: a field's description words the message for its pattern or format.
  verbose: true,
};

function createAjv(options: Options): Ajv {
  const ajv = new Ajv({ ...common, ...options });
  addFormats(ajv);
  // ajv-formats' date-time also takes ISO 8601 forms RFC 3339 does not (`2031-05-06 14:00:00Z`,
  // `+0200`, `+02`): every surface applies the one rule GraphQL's scalar and MCP apply too.
  ajv.addFormat('date-time', { type: 'string', validate: isRfc3339DateTime });
  return ajv;
}

// Bodies: a string is not a number and "true" is not a boolean.
const bodyAjv = createAjv({ coerceTypes: false });
// Query strings and path parameters arrive as text, so they are coerced ("50" → 50, "abc" fails).
const urlAjv = createAjv({ coerceTypes: true });

/** Fastify validator compiler: strict for bodies, coercing for URL parts. */
export function compileValidator({ schema, httpPart }: { schema: object; httpPart?: string }) {
  const ajv = httpPart === 'body' ? bodyAjv : urlAjv;
  return ajv.compile(schema);
}

/**
 * A validator for JSON a client sent other than as a REST body (MCP tool arguments), with the rules
 * and formats bodies have: no coercion, defaults filled in, unknown properties refused where closed.
 */
export function compileJsonValidator(schema: object) {
  return bodyAjv.compile(schema);
}

/**
 * A field whose `pattern` or `format` (other than date-time) is a rule describes it in its
 * `description`, a noun phrase (formats.ts), and the services use the same words: one message.
 */
function describedRule(error: ErrorObject | FastifySchemaValidationError): string | undefined {
  const description = (error as ErrorObject).parentSchema?.description;
  return typeof description === 'string' ? `must be ${description}` : undefined;
}

function messageFor(error: ErrorObject | FastifySchemaValidationError): string {
  switch (error.keyword) {
    case 'pattern':
      return describedRule(error) ?? error.message ?? 'is invalid';
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not allowed';
    case 'enum':
      return `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.map(String).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify((error.params as { allowedValue: unknown }).allowedValue)}`;
    case 'format': {
      const format = (error.params as { format: string }).format;
      if (format === 'date-time') return 'must be an RFC 3339 date-time with a time-zone offset';
      return describedRule(error) ?? `must be a valid ${format}`;
    }
    default:
      return error.message ?? 'is invalid';
  }
}

function fieldFor(error: ErrorObject | FastifySchemaValidationError, part: string): string {
  const params = error.params as Record<string, unknown>;
  const path = error.instancePath
    .split('/')
    .filter(Boolean)
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (error.keyword === 'required') path.push(String(params.missingProperty));
  if (error.keyword === 'additionalProperties') path.push(String(params.additionalProperty));
  return path.length ? path.join('.') : part;
}

/** Turns schema validation errors into the seed's `{field: first message}` map. */
export function fieldErrorsFrom(
  errors: readonly (ErrorObject | FastifySchemaValidationError)[],
  part = 'body',
): FieldErrors {
  const fields: FieldErrors = {};
  for (const error of errors) {
    const field = fieldFor(error, part);
    // Own properties only: `fields.toString ??= …` would find Object.prototype's and name nothing.
    if (!Object.hasOwn(fields, field)) fields[field] = messageFor(error);
  }
  return fields;
}

/**
 * A `\u0000` escape in JSON text (one not itself escaped): PostgreSQL stores no NUL character in text
 * or jsonb, and the ORM's inlined statements break on one, so such a body is refused whole, up front.
 */
const ESCAPED_NUL = /(?<!\\)(?:\\\\)*\\u0000/;
export const NUL_IN_BODY = 'GATEWAY_NUL_IN_BODY';

/**
 * JSON bodies through secure-json-parse (no prototype poisoning), where an empty body is "no body":
 * the PATCH decisions on proposals take none, and clients often still send the JSON content type.
 * Routes whose schema requires a body still answer 400 for an empty one. `refuseNul: false` leaves a
 * U+0000 for the route to refuse field by field (MCP, whose errors are tool results, not HTTP statuses).
 */
export function installJsonBodyParser(app: FastifyInstance, { refuseNul = true }: { refuseNul?: boolean } = {}): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    if (refuseNul && text.includes('\\u0000') && ESCAPED_NUL.test(text)) {
      return done(Object.assign(new Error('the body contains U+0000'), { statusCode: 400, code: NUL_IN_BODY }), undefined);
    }
    try {
      done(null, secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }));
    } catch {
      done(Object.assign(new Error('the body is not valid JSON'), { statusCode: 400, code: 'FST_ERR_CTP_INVALID_JSON_BODY' }), undefined);
    }
  });
}

/**
 * Query-string parameters holding U+0000 (`%00`) are refused before validation, naming the parameter
 * (unstorable-text.ts); a JSON body holding one is refused whole by the body parser above.
 */
export function installQueryTextGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const query = request.query as Record<string, unknown> | undefined;
    if (!query) return;
    for (const [name, value] of Object.entries(query)) {
      const values = Array.isArray(value) ? value : [value];
      if (holdsNul(name) || values.some((text) => typeof text === 'string' && holdsNul(text))) {
        throw AppError.validation({ [name]: UNSTORABLE_TEXT_MESSAGE });
      }
    }
  });
}
