import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
import { ApiError, requestAs } from '../browse/api.js';

/**
 * The agent token the person pasted. It lives in `sessionStorage` (this tab only, gone when the tab
 * closes) and travels only in the `Authorization` header and the WebSocket's `connectionParams`:
 * never in a URL, never in a log line.
 */
const TOKEN_KEY = 'console_agent_token';

export function storedAgentToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function keepAgentToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export function forgetAgentToken(): void {
  sessionStorage.removeItem(TOKEN_KEY);
}

let onRejected: () => void = () => undefined;

/** What to do when the server stops accepting the token (the agent or its token is gone). */
export function whenTokenRejected(listener: () => void): void {
  onRejected = listener;
}

type VariablesOf<Variables> = Variables extends Record<string, never> ? [] : [Variables];

/** Runs a typed operation as the signed-in agent. */
export async function api<Result, Variables>(document: DocumentTypeDecoration<Result, Variables>, ...variables: VariablesOf<Variables>): Promise<Result> {
  try {
    return await requestAs(storedAgentToken(), document, ...variables);
  } catch (error) {
    if (error instanceof ApiError && error.code === 'unauthorized') onRejected();
    throw error;
  }
}
