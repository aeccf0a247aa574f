import 'graphiql/setup-workers/vite';
import 'graphiql/style.css';
import { createGraphiQLFetcher, type Fetcher } from '@graphiql/toolkit';
import { GraphiQL } from 'graphiql';
import { Kind, parse } from 'graphql';
import { createElement } from 'react';
import { createRoot } from 'react-dom/client';
import { EXAMPLE_TABS, NEW_TAB_HEADERS } from './examples.js';
import './phone.css';

// GraphiQL for frontend teams, bundled with the server: queries over HTTP, subscriptions over the
// same path with graphql-ws. It opens on example operations and the Headers tab, where the credential goes.
const url = `${location.origin}/graphql`;
const send = createGraphiQLFetcher({ url, subscriptionUrl: url.replace(/^http/, 'ws') });

/** Whether `query` defines an operation called `name` (a document that does not parse is left to the server). */
function defines(query: string, name: string): boolean {
  try {
    return parse(query).definitions.some((definition) => definition.kind === Kind.OPERATION_DEFINITION && definition.name?.value === name);
  } catch {
    return true;
  }
}

// GraphiQL can send the operation name of the tab it opened on with another tab's document (a new tab,
// or text replaced and run at once): the server rightly refuses a name the document lacks, so a stale
// name is not sent.
const fetcher: Fetcher = (params, options) =>
  send(params.operationName && !defines(params.query, params.operationName) ? { ...params, operationName: null } : params, options);
createRoot(document.getElementById('explorer')!).render(
  createElement(GraphiQL, { fetcher, defaultEditorToolsVisibility: 'headers', defaultTabs: EXAMPLE_TABS, defaultHeaders: NEW_TAB_HEADERS }),
);
