import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import ts from 'typescript';
import type { NamedStatement } from '../../src/platform/db/statements.js';

export interface FoundStatement {
  /** The source file, relative to the repository. */
  file: string;
  name: string;
  text: string;
}

const repository = join(import.meta.dirname, '..', '..');

function isNamedStatement(value: unknown): value is NamedStatement<unknown[], unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { name?: unknown }).name === 'string' && typeof (value as { text?: unknown }).text === 'string';
}

/** The first argument of every `namedStatement(…)` call in a file (the statement's name). */
function namedStatementCalls(file: string, source: string): string[] {
  const names: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'namedStatement') {
      const [name] = node.arguments;
      if (!name || !ts.isStringLiteralLike(name)) {
        throw new Error(`${file}: namedStatement(…) at ${node.getStart()} has no literal name, so the statement check cannot find it`);
      }
      names.push(name.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true));
  return names;
}

/**
 * Every statement the code sends by name: each `namedStatement(…)` call in src/, found in the syntax
 * tree, with the text its module exports (texts are assembled from shared fragments, so the module
 * is imported to read them). A call whose statement its module does not export fails the collection
 * rather than going unchecked.
 */
export async function collectNamedStatements(): Promise<FoundStatement[]> {
  const sourceRoot = join(repository, 'src');
  const files = (await readdir(sourceRoot, { recursive: true }))
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => join(sourceRoot, file));
  const found: FoundStatement[] = [];
  for (const path of files) {
    const source = await readFile(path, 'utf8');
    if (!source.includes('namedStatement')) continue;
    const file = relative(repository, path);
    const names = namedStatementCalls(file, source);
    if (names.length === 0) continue;
    const exported = new Map(
      Object.values((await import(path)) as Record<string, unknown>)
        .filter(isNamedStatement)
        .map((statement) => [statement.name, statement.text]),
    );
    for (const name of names) {
      const text = exported.get(name);
      if (text === undefined) throw new Error(`${file}: the statement '${name}' is not exported by its module, so the statement check cannot read its text`);
      found.push({ file, name, text });
    }
  }
  return found;
}
