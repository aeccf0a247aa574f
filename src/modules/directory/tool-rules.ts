/**
 * The rules of a tool submission, shared by the server and the /browse page (pure, no imports but
 * the URL and text rules), so the form refuses exactly what the server refuses; the REST schema
 * states the same rules from the same constants.
 */
import { followsPattern, HTTP_URL, isHttpUrl, NOT_BLANK } from '../../platform/formats.js';
import { normalizeToolUrl } from './tool-url.js';

export const AUTH_METHODS = ['api_key', 'oauth', 'none', 'other'] as const;
export const PRICING_MODELS = ['free', 'freemium', 'paid', 'usage_based'] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];
export type PricingModel = (typeof PRICING_MODELS)[number];

export const SUBMISSION_LIMITS = {
  nameMaxLength: 255,
  descriptionMaxLength: 1000,
  capabilitiesMax: 50,
  capabilityMaxLength: 100,
  /** `url` and `api_endpoint`. */
  urlMaxLength: 2048,
  /** Category ids are PostgreSQL `integer`s. */
  categoryIdMax: 2_147_483_647,
} as const;

export interface ToolSubmission {
  name: string;
  url: string;
  description: string;
  categoryId: number;
  capabilities?: readonly string[] | null | undefined;
  apiEndpoint?: string | null | undefined;
  authMethod?: string | null | undefined;
  pricingModel?: string | null | undefined;
}

/** Field (in the REST spelling) → message, empty when the submission is acceptable. */
export function checkToolSubmission(input: ToolSubmission): Record<string, string> {
  const fields: Record<string, string> = {};
  if (!followsPattern(input.name, NOT_BLANK)) fields.name = 'is required';
  else if (input.name.length > SUBMISSION_LIMITS.nameMaxLength) fields.name = `must be at most ${SUBMISSION_LIMITS.nameMaxLength} characters`;
  // Surrounding white space is forgiven (the stored URL is trimmed); the REST schema is stricter.
  const normalizedUrl = input.url.length > SUBMISSION_LIMITS.urlMaxLength || !isHttpUrl(input.url.trim()) ? undefined : normalizeToolUrl(input.url);
  if (input.url.length > SUBMISSION_LIMITS.urlMaxLength) fields.url = `must be at most ${SUBMISSION_LIMITS.urlMaxLength} characters`;
  else if (!normalizedUrl) fields.url = `must be ${HTTP_URL.description}`;
  // The normalized form (percent-encoded, what the unique index holds) may be longer than what was sent.
  else if (normalizedUrl.length > SUBMISSION_LIMITS.urlMaxLength) fields.url = `must be at most ${SUBMISSION_LIMITS.urlMaxLength} characters once percent-encoded`;
  if (!followsPattern(input.description, NOT_BLANK)) fields.description = 'is required';
  else if (input.description.length > SUBMISSION_LIMITS.descriptionMaxLength) {
    fields.description = `must be at most ${SUBMISSION_LIMITS.descriptionMaxLength} characters`;
  }
  if (!Number.isInteger(input.categoryId) || input.categoryId < 1 || input.categoryId > SUBMISSION_LIMITS.categoryIdMax) fields.category_id = 'must be a category id';
  const capabilities = input.capabilities ?? [];
  if (capabilities.length > SUBMISSION_LIMITS.capabilitiesMax) fields.capabilities = `must have at most ${SUBMISSION_LIMITS.capabilitiesMax} entries`;
  else if (capabilities.some((capability) => !followsPattern(capability, NOT_BLANK) || capability.length > SUBMISSION_LIMITS.capabilityMaxLength)) {
    fields.capabilities = `entries must be 1 to ${SUBMISSION_LIMITS.capabilityMaxLength} characters`;
  }
  if (input.apiEndpoint !== undefined && input.apiEndpoint !== null) {
    if (input.apiEndpoint.length > SUBMISSION_LIMITS.urlMaxLength) fields.api_endpoint = `must be at most ${SUBMISSION_LIMITS.urlMaxLength} characters`;
    else if (!isHttpUrl(input.apiEndpoint) || !normalizeToolUrl(input.apiEndpoint)) fields.api_endpoint = `must be ${HTTP_URL.description}`;
  }
  if (input.authMethod !== undefined && input.authMethod !== null && !(AUTH_METHODS as readonly string[]).includes(input.authMethod)) {
    fields.auth_method = `must be one of ${AUTH_METHODS.join(', ')}`;
  }
  if (input.pricingModel !== undefined && input.pricingModel !== null && !(PRICING_MODELS as readonly string[]).includes(input.pricingModel)) {
    fields.pricing_model = `must be one of ${PRICING_MODELS.join(', ')}`;
  }
  return fields;
}
