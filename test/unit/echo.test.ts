import { describe, expect, it } from '@jest/globals';
import { boundFieldErrors, boundMessage, echo, ECHO_LIMITS } from '../../src/platform/echo.js';

describe('echo: how much of an input a message repeats', () => {
  it('quotes a value whole up to 64 characters, else its first 64 and an ellipsis', () => {
    expect(echo('x'.repeat(64))).toBe('x'.repeat(64));
    expect(echo('x'.repeat(65))).toBe(`${'x'.repeat(64)}…`);
    expect(echo(9007199254740993n)).toBe('9007199254740993');
  });

  it('never cuts a surrogate pair in two', () => {
    const cut = echo(`${'x'.repeat(63)}🧨🧨`);
    expect(cut).toBe(`${'x'.repeat(63)}…`);
    expect(cut.isWellFormed()).toBe(true);
  });

  it('cuts each quoted value of a message (graphql-js quotes whole values) and the message itself', () => {
    const value = '9'.repeat(900_000);
    const message = `Variable "$x" got invalid value "${value}"; Int cannot represent non-integer value: "${value}"`;
    expect(boundMessage(message)).toBe(`Variable "$x" got invalid value "${'9'.repeat(64)}…"; Int cannot represent non-integer value: "${'9'.repeat(64)}…"`);
    expect(boundMessage(`no route GET /${'a'.repeat(10_000)}`)).toHaveLength(ECHO_LIMITS.messageChars + 1);
    // Escaped quotes inside a quoted value stay inside it.
    expect(boundMessage(`got "${'a\\"'.repeat(100)}" then more`)).toMatch(/^got "(a\\"){21}a…" then more$/);
  });

  it('names at most 20 fields, each name bounded, keeping names an object prototype also has', () => {
    const fields = Object.fromEntries([['constructor', 'is not allowed'], ['k'.repeat(1_000), 'is not allowed'], ...Array.from({ length: 40 }, (_, n) => [`f${n}`, 'x'.repeat(10_000)])]);
    const bounded = boundFieldErrors(fields);
    expect(Object.keys(bounded)).toHaveLength(ECHO_LIMITS.fields);
    expect(bounded.constructor).toBe('is not allowed');
    expect(bounded[`${'k'.repeat(ECHO_LIMITS.fieldNameChars)}…`]).toBe('is not allowed');
    expect(bounded.f0).toHaveLength(ECHO_LIMITS.messageChars + 1);
  });
});
