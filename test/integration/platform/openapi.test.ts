import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestApp, type TestApp } from '../../harness.js';

const REDOCLY_CLI = join(dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')), 'bin/cli.js');
const SPECTRAL_CLI = join(dirname(createRequire(import.meta.url).resolve('@stoplight/spectral-cli/package.json')), 'dist/index.js');

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
}

/** `redocly lint` with the committed redocly.yaml (recommended-strict and more), as a client would run it. */
async function redoclyLint(documentUrl: string): Promise<LintReport> {
  const run = promisify(execFile)(process.execPath, [REDOCLY_CLI, 'lint', documentUrl, '--config', 'redocly.yaml', '--format', 'json'], {
    env: { ...process.env, NODE_OPTIONS: '', REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    maxBuffer: 16 * 1024 * 1024,
  });
  // A document with errors exits 1 and still prints its report.
  const { stdout } = await run.catch((failure: { stdout?: string }) => ({ stdout: failure.stdout ?? '' }));
  return JSON.parse(stdout) as LintReport;
}

interface SpectralResult {
  code: string;
  severity: number;
  message: string;
  path: string[];
}

/** `spectral lint` with the committed .spectral.yaml (spectral:oas, recommended), as a client would run it; every severity reported. */
async function spectralLint(documentUrl: string): Promise<SpectralResult[]> {
  const run = promisify(execFile)(
    process.execPath,
    [SPECTRAL_CLI, 'lint', documentUrl, '--ruleset', '.spectral.yaml', '--format', 'json', '--fail-severity', 'hint', '--quiet'],
    { env: { ...process.env, NODE_OPTIONS: '' }, maxBuffer: 16 * 1024 * 1024 },
  );
  // Any result exits 1 (`--fail-severity hint`) and still prints its report.
  const { stdout } = await run.catch((failure: { stdout?: string }) => ({ stdout: failure.stdout ?? '' }));
  return JSON.parse(stdout) as SpectralResult[];
}

type Parameter = { name: string; in: string; description?: string };
type DocumentedResponse = { description: string; content?: Record<string, { schema?: unknown }> };
type Operation = { description?: string; parameters?: Parameter[]; requestBody?: unknown; responses: Record<string, DocumentedResponse> };

describe('the OpenAPI document', () => {
  let t: TestApp;
  let documentUrl: string;
  beforeAll(async () => {
    t = await startTestApp({ jobs: false });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    documentUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/openapi.json`;
  });
  afterAll(() => t.close());

  it('passes redocly lint with the committed rules: no errors, no warnings', async () => {
    const report = await redoclyLint(documentUrl);
    const problems = report.problems.map((problem) => `${problem.severity} ${problem.ruleId} at ${problem.location[0]?.pointer}: ${problem.message}`);
    expect(problems).toEqual([]);
    expect(report.totals).toEqual({ errors: 0, warnings: 0, ignored: 0 });
  }, 60_000);

  it('passes spectral lint with spectral:oas: no errors, no warnings, no hints', async () => {
    const results = await spectralLint(documentUrl);
    expect(results.map((result) => `${result.severity} ${result.code} at ${result.path.join('.')}: ${result.message}`)).toEqual([]);
  }, 60_000);

  it('describes every operation and parameter, and declares the schema of every answer with a body', async () => {
    const document = (await (await fetch(documentUrl)).json()) as { info: { contact?: object }; paths: Record<string, Record<string, Operation>> };
    expect(document.info.contact).toBeDefined();
    const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, operation })),
    );
    expect(operations.filter(({ operation }) => !operation.description?.trim()).map(({ name }) => name)).toEqual([]);
    const undescribed = operations.flatMap(({ name, operation }) =>
      (operation.parameters ?? []).filter((parameter) => !parameter.description?.trim()).map((parameter) => `${name} ${parameter.in} ${parameter.name}`),
    );
    expect(undescribed).toEqual([]);
    // 204 and 304 have no body by definition; every other answer says what its body is.
    const withoutSchema = operations.flatMap(({ name, operation }) =>
      Object.entries(operation.responses)
        .filter(([status, response]) => status !== '204' && status !== '304' && !Object.values(response.content ?? {}).some((media) => media.schema !== undefined))
        .map(([status]) => `${name} ${status}`),
    );
    expect(withoutSchema).toEqual([]);
  });

  it('is the committed schema/openapi.json, from which the typed client is generated', async () => {
    const served = await (await fetch(documentUrl)).json();
    expect(served).toEqual(JSON.parse(await readFile('schema/openapi.json', 'utf8')));
  });

  it('names every operation and documents a 4xx answer for every operation that takes input', async () => {
    const document = (await (await fetch(documentUrl)).json()) as { paths: Record<string, Record<string, Operation & { operationId?: string }>> };
    const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, operation })),
    );
    expect(operations.filter(({ operation }) => !operation.operationId).map(({ name }) => name)).toEqual([]);
    const takesInput = operations.filter(({ operation }) => (operation.parameters?.length ?? 0) > 0 || operation.requestBody !== undefined);
    expect(takesInput.length).toBeGreaterThan(20);
    const without4xx = takesInput.filter(({ operation }) => !Object.keys(operation.responses).some((status) => status.startsWith('4')));
    expect(without4xx.map(({ name }) => name)).toEqual([]);
  });
});
