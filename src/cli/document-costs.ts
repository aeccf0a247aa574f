import 'reflect-metadata';
import { documentCostTable } from './document-cost-table.js';

// `npm run graphql:costs`: the table docs/graphql.md shows under Cost (document-costs.test.ts keeps it current).
console.log(await documentCostTable());
