/** Seed 000 error bodies, for the OpenAPI description of every scheduling route. */
export const errorBody = {
  type: 'object',
  required: ['error'],
  properties: { error: { type: 'string' }, message: { type: 'string' } },
} as const;

export const validationErrorBody = {
  type: 'object',
  required: ['errors'],
  properties: { errors: { type: 'object', additionalProperties: { type: 'string' } } },
} as const;

/** Response schemas for the listed error statuses (400 is the validation map), plus 500. */
export function errorResponses(...statuses: number[]): Record<number, object> {
  const responses: Record<number, object> = { 500: errorBody };
  for (const status of statuses) {
    responses[status] = status === 400 ? { anyOf: [validationErrorBody, errorBody] } : errorBody;
  }
  return responses;
}
