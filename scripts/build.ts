// `npm run build` and the builds before `npm start`, `npm run seed:demo`, `npm test` and typecheck: each step
// runs only when one of its inputs changed since it last succeeded.
//
//   node scripts/build.ts [server|web|codegen|all]... [--force]
//
// A step's stamp records its command and the SHA-256 of every input file's content, taken before it runs,
// and is written (dist/.build/<step>.json) only after it succeeded; a step is skipped when its outputs
// exist and the command, the set of input files and every file's content are those of the stamp. Contents,
// not modification times: a checkout, a `git stash` or a copy that keeps times cannot fool it, and touching
// a file without changing it costs nothing.
// Dependencies are covered by package-lock.json. Erasable TypeScript only: Node runs this file as it is.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const STAMPS = join(ROOT, 'dist/.build');
const BIN = join(ROOT, 'node_modules/.bin');

export interface Step {
  /** Steps whose outputs this one reads. */
  after: readonly string[];
  command: readonly string[];
  /** Input files, relative to the repository; listed when the step's turn comes (after its dependencies). */
  inputs(): string[];
  /** Inputs the step itself reports once it has run (the files a bundler followed imports to). */
  discoveredInputs?(): string[];
  outputs: readonly string[];
}

/** What a step was built from: its command and the SHA-256 of each input file's content. */
export interface Stamp {
  command: string;
  files: Record<string, string>;
}

/** Every file under `dir` (relative to `root`), without the folders `skip` names. */
export function filesUnder(root: string, dir: string, skip: readonly string[] = []): string[] {
  const found: string[] = [];
  const walk = (relativeDir: string) => {
    if (!existsSync(join(root, relativeDir))) return;
    for (const entry of readdirSync(join(root, relativeDir), { withFileTypes: true })) {
      const path = join(relativeDir, entry.name);
      if (entry.isDirectory()) {
        if (!skip.includes(path)) walk(path);
      } else {
        found.push(path);
      }
    }
  };
  walk(dir);
  return found;
}

/** The files outside src/web that the last Vite build bundled (recorded by vite.config.ts). */
function webInputsOutsideWeb(): string[] {
  const recorded = join(ROOT, 'dist/web/.inputs.json');
  return existsSync(recorded) ? (JSON.parse(readFileSync(recorded, 'utf8')) as string[]) : [];
}

const LOCKFILE = ['package.json', 'package-lock.json'];

const STEPS: Record<string, Step> = {
  // Typed documents for the pages (src/web/generated) and the tests (test/generated), from the committed SDL,
// with the trusted-documents manifests the server loads at start.
  codegen: {
    after: [],
    command: ['graphql-codegen', '--config', 'codegen.yml', '--silent'],
    inputs: () => ['codegen.yml', 'schema/schema.graphql', ...filesUnder(ROOT, 'src/web/operations'), ...filesUnder(ROOT, 'test/operations'), ...LOCKFILE],
    outputs: ['src/web/generated/pages/graphql.ts', 'src/web/generated/pages/persisted-documents.json', 'src/web/generated/console/graphql.ts', 'src/web/generated/console/persisted-documents.json', 'test/generated/graphql.ts', 'test/generated/persisted-documents.json'],
  },
  // The REST client types the tests use, from the committed OpenAPI document.
  'openapi-types': {
    after: [],
    command: ['openapi-typescript', 'schema/openapi.json', '--output', 'test/generated/openapi.ts'],
    inputs: () => ['schema/openapi.json', ...LOCKFILE],
    outputs: ['test/generated/openapi.ts'],
  },
  // The server: tsc with its own incremental build information (tsconfig.build.json), for what did change.
  server: {
    after: [],
    command: ['tsc', '-p', 'tsconfig.build.json'],
    inputs: () => [...filesUnder(ROOT, 'src', ['src/web']), ...filesUnder(ROOT, 'migrations'), 'tsconfig.json', 'tsconfig.build.json', ...LOCKFILE],
    outputs: ['dist/src/main.js'],
  },
  web: {
    after: ['codegen'],
    command: ['vite', 'build', '--config', 'src/web/vite.config.ts', '--logLevel', 'error'],
    inputs: () => [...filesUnder(ROOT, 'src/web'), ...webInputsOutsideWeb(), ...LOCKFILE],
    discoveredInputs: webInputsOutsideWeb,
    outputs: ['dist/web/index.html', 'dist/web/.inputs.json'],
  },
};

const TARGETS: Record<string, readonly string[]> = {
  all: ['server', 'web'],
  server: ['server'],
  web: ['web'],
  codegen: ['codegen', 'openapi-types'],
};

export function hashFile(root: string, file: string): string {
  const path = join(root, file);
  return existsSync(path) ? createHash('sha256').update(readFileSync(path)).digest('hex') : 'missing';
}

/** Each input file (relative to `root`) with the hash of its content. */
export function hashInputs(root: string, files: readonly string[]): Record<string, string> {
  return Object.fromEntries([...new Set(files)].sort().map((file) => [file, hashFile(root, file)]));
}

/** Why the step must run, or undefined when its outputs exist and nothing it was built from has changed. */
export function staleness(root: string, step: Pick<Step, 'command' | 'outputs'>, stamp: Stamp | undefined, inputs: Record<string, string>): string | undefined {
  const missing = step.outputs.find((output) => !existsSync(join(root, output)));
  if (missing) return `${missing} is missing`;
  if (!stamp || stamp.command !== step.command.join(' ')) return 'never built by this command';
  const added = Object.keys(inputs).find((file) => !(file in stamp.files));
  if (added) return `${added} is new`;
  const changed = Object.entries(stamp.files).find(([file, hash]) => (inputs[file] ?? hashFile(root, file)) !== hash);
  return changed ? `${changed[0]} changed` : undefined;
}

/**
 * The stamp a successful run leaves: the inputs as hashed before it, and the inputs it reported itself.
 * Those are hashed now, unless they changed while it ran (then the next build runs again).
 */
export function stampAfterRun(root: string, step: Pick<Step, 'command'>, inputs: Record<string, string>, discovered: readonly string[], startedAtMs: number): Stamp {
  const files = { ...inputs };
  for (const file of discovered) {
    if (file in files) continue;
    const path = join(root, file);
    files[file] = existsSync(path) && statSync(path).mtimeMs >= startedAtMs ? 'changed during the build' : hashFile(root, file);
  }
  return { command: step.command.join(' '), files };
}

const stampFile = (name: string) => join(STAMPS, `${name}.json`);

function readStamp(name: string): Stamp | undefined {
  return existsSync(stampFile(name)) ? (JSON.parse(readFileSync(stampFile(name), 'utf8')) as Stamp) : undefined;
}

function run(command: readonly string[]): Promise<void> {
  const [program, ...args] = command;
  return new Promise((done, fail) => {
    const child = spawn(join(BIN, program!), args, { cwd: ROOT, stdio: 'inherit' });
    child.on('error', fail);
    child.on('exit', (code, signal) => (code === 0 ? done() : fail(new Error(`${command.join(' ')} failed (${signal ?? `exit ${code}`})`))));
  });
}

async function main(argv: readonly string[]): Promise<void> {
  const force = argv.includes('--force');
  const requested = argv.filter((argument) => !argument.startsWith('--'));
  const unknown = requested.filter((target) => !(target in TARGETS));
  if (unknown.length > 0) {
    process.stderr.write(`unknown build target ${unknown.join(', ')}: use ${Object.keys(TARGETS).join(', ')}\n`);
    process.exit(2);
  }

  const running = new Map<string, Promise<void>>();
  function build(name: string): Promise<void> {
    const existing = running.get(name);
    if (existing) return existing;
    const step = STEPS[name]!;
    const promise = Promise.all(step.after.map(build)).then(async () => {
      // Hashed before the step runs: a file edited while it runs leaves a stamp that no longer matches.
      const inputs = hashInputs(ROOT, step.inputs());
      const reason = force ? 'forced' : staleness(ROOT, step, readStamp(name), inputs);
      if (reason === undefined) return;
      process.stdout.write(`building ${name}: ${reason}\n`);
      const started = Date.now();
      await run(step.command);
      mkdirSync(dirname(stampFile(name)), { recursive: true });
      writeFileSync(stampFile(name), JSON.stringify(stampAfterRun(ROOT, step, inputs, step.discoveredInputs?.() ?? [], started)));
      process.stdout.write(`built ${name} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    });
    running.set(name, promise);
    return promise;
  }

  const steps = new Set((requested.length > 0 ? requested : ['all']).flatMap((target) => TARGETS[target]!));
  try {
    await Promise.all([...steps].map(build));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(1);
  }
}

if (import.meta.main) await main(process.argv.slice(2));
