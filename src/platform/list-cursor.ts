import { AppError } from './errors.js';

/**
 * Where a page of a list ends, opaque to clients. One text per list, whichever adapter hands it out:
 * GraphQL's `endCursor`, the `after` of REST's `Link: <…>; rel="next"` and MCP's `nextCursor` are the
 * same cursor, and each adapter accepts it back as `after`. Every part is checked before it reaches SQL.
 */
export const encodeCursor = (text: string): string => Buffer.from(text).toString('base64url');
export const cursorText = (cursor: string): string => Buffer.from(cursor, 'base64url').toString();
export const notACursor = (): AppError => AppError.validation({ after: 'is not a cursor from this list' });
export const isoOf = (value: Date | string): string => (typeof value === 'string' ? value : value.toISOString());
