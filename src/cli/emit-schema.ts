import 'reflect-metadata';
import { readFile, writeFile } from 'node:fs/promises';
import { resolverClasses } from '../modules/index.js';
import { buildGatewaySchema, printGatewaySchema } from '../platform/graphql/schema.js';

// `npm run schema:emit` writes the SDL; `npm run schema:check` fails when the committed file differs.
const args = process.argv.slice(2);
const check = args.includes('--check');
const target = args.find((arg) => !arg.startsWith('--')) ?? 'schema/schema.graphql';

const sdl = printGatewaySchema(await buildGatewaySchema({ resolvers: resolverClasses }));
if (check) {
  const committed = await readFile(target, 'utf8').catch(() => '');
  if (committed !== sdl) {
    console.error(`${target} is out of date with the resolvers: run \`npm run schema:emit\` and commit the result.`);
    process.exit(1);
  }
  console.log(`${target} matches the code.`);
} else {
  await writeFile(target, sdl);
  console.log(`wrote ${target}`);
}
