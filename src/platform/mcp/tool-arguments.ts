import type { ValidateFunction } from 'ajv';
import { AppError, type FieldErrors } from '../errors.js';
import { compileJsonValidator, fieldErrorsFrom } from '../http/validation.js';
import { fieldsWithNul, UNSTORABLE_TEXT_MESSAGE } from '../unstorable-text.js';
import type { ToolDefinition } from './tool.js';

/** Compiles each tool's published schema once. */
export function argumentValidators(tools: readonly ToolDefinition<unknown>[]): Map<string, ValidateFunction> {
  return new Map(tools.map((tool) => [tool.name, compileJsonValidator(tool.inputSchema)]));
}

/**
 * A tool's arguments as its published schema accepts them, defaults filled in, checked by the validator
 * and with the messages of REST bodies: an unknown argument `is not allowed`, a date-time must be RFC 3339.
 * Else a `validation` error naming every wrong argument. U+0000 is refused here, argument by argument
 * (REST refuses such a body whole), since PostgreSQL stores no such character.
 */
export function checkedArguments(validate: ValidateFunction, args: Record<string, unknown>): unknown {
  const valid = validate(args);
  const withNul = fieldsWithNul(args, 'arguments');
  if (valid && withNul.length === 0) return args;
  const fields: FieldErrors = valid ? {} : fieldErrorsFrom(validate.errors ?? [], 'arguments');
  for (const field of withNul) if (!Object.hasOwn(fields, field)) fields[field] = UNSTORABLE_TEXT_MESSAGE;
  throw AppError.validation(fields);
}
