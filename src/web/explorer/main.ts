import 'graphiql/setup-workers/vite';
import 'graphiql/style.css';
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import { GraphiQL } from 'graphiql';
import { createElement } from 'react';
import { createRoot } from 'react-dom/client';
import { EXAMPLE_TABS, NEW_TAB_HEADERS } from './examples.js';
import './phone.css';

// GraphiQL for frontend teams, bundled with the server: queries over HTTP, subscriptions over the
// same path with graphql-ws. It opens on example operations and the Headers tab, where the credential goes.
const url = `${location.origin}/graphql`;
const fetcher = createGraphiQLFetcher({ url, subscriptionUrl: url.replace(/^http/, 'ws') });
createRoot(document.getElementById('explorer')!).render(
  createElement(GraphiQL, { fetcher, defaultEditorToolsVisibility: 'headers', defaultTabs: EXAMPLE_TABS, defaultHeaders: NEW_TAB_HEADERS }),
);
