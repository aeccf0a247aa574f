import 'reflect-metadata';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { documentCostTable } from '../../src/cli/document-cost-table.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe("docs/graphql.md's cost table", () => {
  it('is what `npm run graphql:costs` prints for the pages’ documents today', async () => {
    const guide = await readFile(path.join(ROOT, 'docs/graphql.md'), 'utf8');
    const table = await documentCostTable();
    const header = table.split('\n')[0]!;
    const start = guide.indexOf(header);
    expect(start).toBeGreaterThan(-1);
    const shown = guide.slice(start).split('\n\n')[0]!.trim();
    // A page's new or changed document changes its row: run `npm run graphql:costs` and paste the table.
    expect(shown).toBe(table);
  });
});
