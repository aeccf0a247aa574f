import { AppError, type FieldErrors } from '../../platform/errors.js';
import { compileJsonValidator, fieldErrorsFrom, fieldsWithNul, NUL_NOT_ALLOWED } from '../../platform/http/validation.js';
import { TOOLS, type ToolDefinition } from './tools.js';

const VALIDATORS = new Map(TOOLS.map((tool) => [tool.name, compileJsonValidator(tool.inputSchema)]));

/**
 * A tool's arguments as its published schema accepts them, defaults filled in, checked by the validator
 * and with the messages of REST bodies: an unknown argument `is not allowed`, a date-time must be RFC 3339.
 * Else a `validation` error naming every wrong argument. U+0000 is refused here, argument by argument
 * (REST refuses such a body whole), since PostgreSQL stores no such character.
 */
export function checkedArguments(tool: ToolDefinition<unknown>, args: Record<string, unknown>): unknown {
  const validate = VALIDATORS.get(tool.name)!;
  const valid = validate(args);
  const withNul = fieldsWithNul(args, 'arguments');
  if (valid && withNul.length === 0) return args;
  const fields: FieldErrors = valid ? {} : fieldErrorsFrom(validate.errors ?? [], 'arguments');
  for (const field of withNul) if (!Object.hasOwn(fields, field)) fields[field] = NUL_NOT_ALLOWED;
  throw AppError.validation(fields);
}
