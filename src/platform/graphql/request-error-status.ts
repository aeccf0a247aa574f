import type { ApolloServerPlugin, GraphQLRequestListener } from '@apollo/server';

const GRAPHQL_RESPONSE_MEDIA_TYPE = 'application/graphql-response+json';
const JSON_MEDIA_TYPE = 'application/json';

/**
 * Whether the client named `application/json` in its Accept header and not
 * `application/graphql-response+json`: a client written before the GraphQL-over-HTTP specification,
 * which reads the body and may not read a 4xx.
 */
export function acceptsOnlyLegacyJson(accept: string | undefined): boolean {
  if (!accept) return false;
  let json = false;
  for (const range of accept.split(',')) {
    const [mediaType = '', ...parameters] = range.split(';');
    // "q=0" is "not acceptable", the same as not naming the type at all.
    if (parameters.some((parameter) => /^\s*q\s*=\s*0(\.0*)?\s*$/i.test(parameter))) continue;
    const essence = mediaType.trim().toLowerCase();
    if (essence === GRAPHQL_RESPONSE_MEDIA_TYPE) return false;
    if (essence === JSON_MEDIA_TYPE) json = true;
  }
  return json;
}

/**
 * GraphQL-over-HTTP: a well-formed request whose document does not parse or validate, or whose
 * variables do not coerce, is a GraphQL request error; with `application/json` the server SHOULD
 * answer it 200 (the errors are in the body), with `application/graphql-response+json` 400. Apollo
 * answers 400 to both. Here the answer is 200 for a client that asked for `application/json` only.
 * A client that sends no Accept header keeps Apollo's 400: existing clients and tests rely on it.
 *
 * Apollo marks exactly these request errors as a 400 without `data`; a resolver error always carries
 * `data`, and errors in the HTTP request itself (not JSON, `query` missing) never reach a plugin, so
 * those keep their 400.
 */
export function requestErrorStatusPlugin<Context extends object>(): ApolloServerPlugin<Context> {
  // One listener for every request: this runs on the hot path and holds no per-request state.
  const listener: GraphQLRequestListener<Context> = {
    async willSendResponse({ request, response }) {
      if (response.http.status !== 400 || response.body.kind !== 'single') return;
      if (response.body.singleResult.data !== undefined) return;
      if (acceptsOnlyLegacyJson(request.http?.headers.get('accept'))) response.http.status = 200;
    },
  };
  return { requestDidStart: async () => listener };
}
