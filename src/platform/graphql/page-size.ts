import { AppError } from '../errors.js';

/** Page sizes in GraphQL follow the REST limits: an integer from 1 to `max`. */
export function checkLimit(field: string, value: number, max: number): number {
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw AppError.validation({ [field]: `must be an integer from 1 to ${max}` });
  }
  return value;
}
