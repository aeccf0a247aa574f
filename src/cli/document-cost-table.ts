import { resolve } from 'node:path';
import { Kind } from 'graphql';
import { TRUSTED_DOCUMENT_MANIFESTS } from '../app.js';
import { resolverClasses } from '../modules/index.js';
import { buildGatewaySchema } from '../platform/graphql/schema.js';
import { TrustedDocuments } from '../platform/graphql/trusted-documents.js';
import { costOverConditions } from '../platform/graphql/cost-over-conditions.js';
import { PACKAGE_ROOT } from '../platform/manifest.js';

const PAGES = { 'src/web/generated/pages/persisted-documents.json': '/browse, /prices', 'src/web/generated/console/persisted-documents.json': '/console' };

/**
 * What each document the pages send is estimated at, whichever way its conditions go (IBM cost directives,
 * GRAPHQL_COST_PER_MIN's points; cost-over-conditions.ts), as the Markdown table docs/graphql.md shows under Cost.
 */
export async function documentCostTable(): Promise<string> {
  const schema = await buildGatewaySchema({ resolvers: resolverClasses });
  const rows: string[] = ['| page | operation | estimated cost |', '| --- | --- | --- |'];
  for (const file of TRUSTED_DOCUMENT_MANIFESTS.filter((manifest) => manifest in PAGES)) {
    for (const trusted of TrustedDocuments.load([resolve(PACKAGE_ROOT, file)])) {
      for (const definition of trusted.document.definitions) {
        if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
        const cost = costOverConditions(schema, trusted.document, definition);
        rows.push(`| ${PAGES[file as keyof typeof PAGES]} | ${definition.operation} ${definition.name?.value ?? '(anonymous)'} | ${cost} |`);
      }
    }
  }
  return rows.join('\n');
}
