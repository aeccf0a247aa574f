import 'graphiql/setup-workers/vite';
import 'graphiql/style.css';
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import { GraphiQL } from 'graphiql';
import { createElement } from 'react';
import { createRoot } from 'react-dom/client';

// GraphiQL for frontend teams, bundled with the server: queries over HTTP, subscriptions over the
// same path with graphql-ws. Put the credential in the Headers tab (Authorization: Bearer …).
const url = `${location.origin}/graphql`;
const fetcher = createGraphiQLFetcher({ url, subscriptionUrl: url.replace(/^http/, 'ws') });
createRoot(document.getElementById('explorer')!).render(createElement(GraphiQL, { fetcher, defaultEditorToolsVisibility: 'headers' }));
