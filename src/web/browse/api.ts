import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';

export const TOKEN_KEY = 'lp_token';

export interface GraphQLErrorEntry {
  message: string;
  extensions?: { code?: string; errors?: Record<string, string> };
}

/** A GraphQL answer with errors: the first one's code and field map, as the server sent them. */
export class ApiError extends Error {
  readonly code: string;
  readonly fields: Record<string, string>;

  constructor(errors: GraphQLErrorEntry[]) {
    const first = errors[0];
    super(first?.message ?? 'The request failed');
    this.code = first?.extensions?.code ?? 'unknown';
    this.fields = first?.extensions?.errors ?? {};
  }
}

export function storedToken(): string | null {
  return localStorage.getItem(TOKEN_KEY);
}

/**
 * What identifies the document to the server: its id in the trusted-documents manifest that the build
 * published (GraphQL over HTTP's `documentId`, generated as `__meta__.hash`), so a server that accepts
 * only trusted documents runs the page's; the text only for a document generated without one.
 */
function documentOf<Result, Variables>(document: DocumentTypeDecoration<Result, Variables>): { documentId: string } | { query: string } {
  const documentId = (document as { __meta__?: { hash?: unknown } }).__meta__?.hash;
  return typeof documentId === 'string' ? { documentId } : { query: document.toString() };
}

type VariablesOf<Variables> = Variables extends Record<string, never> ? [] : [Variables];

/** Runs a typed operation against this server's /graphql, with the stored JWT when there is one. */
export function request<Result, Variables>(document: DocumentTypeDecoration<Result, Variables>, ...variables: VariablesOf<Variables>): Promise<Result> {
  return requestAs(storedToken(), document, ...variables);
}

/**
 * Runs a typed operation against this server's /graphql with `token` as the bearer credential (null: none).
 * `document` is any page's generated document string (each page has its own generated module).
 */
export async function requestAs<Result, Variables>(
  token: string | null,
  document: DocumentTypeDecoration<Result, Variables>,
  ...[variables]: VariablesOf<Variables>
): Promise<Result> {
  let response: Response;
  try {
    response = await fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ ...documentOf(document), variables: variables ?? {} }),
    });
  } catch {
    throw new ApiError([{ message: 'The server cannot be reached. Check your connection and try again.', extensions: { code: 'network' } }]);
  }
  const body = (await response.json().catch(() => ({}))) as { data?: Result; errors?: GraphQLErrorEntry[] };
  if (body.errors?.length) throw new ApiError(body.errors);
  if (!response.ok || !body.data) throw new ApiError([{ message: `The server answered ${response.status}.` }]);
  return body.data;
}
