import { fullFormats } from 'ajv-formats/dist/formats.js';

/**
 * The rules behind the `format`s and patterns the route schemas state, for the services' own checks
 * (GraphQL and MCP reach only those): the very functions the REST validator runs (ajv-formats, full
 * mode), so that what `/openapi.json` promises and what every transport refuses are one rule.
 * Browser-safe: the /browse form checks a tool with them before sending it.
 */
const uriFormat = fullFormats.uri as (text: string) => boolean;
const emailFormat = fullFormats.email as RegExp;

/** JSON Schema's `format: uri`: an absolute RFC 3986 URI (ASCII only). */
export const isUri = (text: string): boolean => uriFormat(text);

/** JSON Schema's `format: email`. */
export const isEmail = (text: string): boolean => emailFormat.test(text);

/**
 * A rule a schema states as a `pattern`, and the words both the schema's description and the
 * services' messages use for it (REST answers `must be <description>` for a value that fails it).
 */
export interface PatternRule {
  readonly pattern: string;
  readonly description: string;
}

/**
 * An absolute http or https URL with a host. What JSON Schema cannot say is in the words: the URL must
 * also be one a WHATWG URL parser reads (the server fetches and normalises it with one), which refuses
 * a few that RFC 3986 allows (a port over 65535, a host name ending in a number that is no IPv4 address).
 */
export const HTTP_URL: PatternRule = {
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://(?:[^/?#@]*@)?[^/?#@:]',
  description: 'an absolute http or https URL with a host (RFC 3986: other characters than ASCII percent-encoded, host names in punycode) that a WHATWG URL parser reads',
};

/** The same, without a user name or password before its host. */
export const HTTP_URL_WITHOUT_CREDENTIALS: PatternRule = {
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#@:][^/?#@]*(?:[/?#]|$)',
  description:
    'an absolute http or https URL with a host and without credentials (RFC 3986: other characters than ASCII percent-encoded, host names in punycode) that a WHATWG URL parser reads',
};

/** Text that is not only white space (what `trim()` removes: JavaScript's `\s`). */
export const NOT_BLANK: PatternRule = {
  pattern: '\\S',
  description: 'text that is not only white space',
};

const compiled = new Map<string, RegExp>();
/** Whether `text` follows `rule`'s pattern, as ajv tests it (`u` flag, unanchored unless the pattern anchors). */
export function followsPattern(text: string, rule: PatternRule): boolean {
  let pattern = compiled.get(rule.pattern);
  if (!pattern) compiled.set(rule.pattern, (pattern = new RegExp(rule.pattern, 'u')));
  return pattern.test(text);
}

/** An http(s) URL as the schema from `httpUrlSchema(…, rule)` accepts it: `format: uri` and the rule's pattern. */
export const isHttpUrl = (text: string, rule: PatternRule = HTTP_URL): boolean => followsPattern(text, rule) && isUri(text);

/** The schema of an http(s) URL field: `format: uri`, the rule's pattern and description, a length bound. */
export function httpUrlSchema(maxLength: number, rule: PatternRule = HTTP_URL) {
  return { type: 'string', minLength: 1, maxLength, format: 'uri', pattern: rule.pattern, description: rule.description } as const;
}
