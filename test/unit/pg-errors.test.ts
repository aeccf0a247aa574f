import { describe, expect, it } from '@jest/globals';
import { isDatabaseUnavailable } from '../../src/platform/db/pg-errors.js';

const errorWith = (fields: Record<string, unknown>, message = 'failure') => Object.assign(new Error(message), fields);

describe('isDatabaseUnavailable', () => {
  it.each([
    ['a connection exception', errorWith({ code: '08006' })],
    ['a statement timeout', errorWith({ code: '57014' })],
    ['a lock timeout', errorWith({ code: '55P03' })],
    ['the server shutting down', errorWith({ code: '57P01' })],
    ['a refused connection', errorWith({ code: 'ECONNREFUSED' })],
    ["pg-pool's connect timeout", new Error('timeout exceeded when trying to connect')],
    ["pg's query timeout", new Error('Query read timeout')],
    ['a driver error wrapping a lost connection', errorWith({ cause: new Error('Connection terminated unexpectedly') })],
  ])('is true for %s', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a client that hung up mid-body (ECONNRESET with 400)', errorWith({ code: 'ECONNRESET', statusCode: 400 }, 'aborted')],
    ['a protocol violation a request can cause (08P01)', errorWith({ code: '08P01' })],
    ['a unique violation', errorWith({ code: '23505' })],
    ['any other error', new Error('boom')],
  ])('is false for %s', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
