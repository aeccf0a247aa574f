import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestApp, type TestApp } from '../../harness.js';

const REDOCLY_CLI = join(dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')), 'bin/cli.js');

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
}

/** `redocly lint` with the committed redocly.yaml (recommended rules), as a client would run it. */
async function redoclyLint(documentUrl: string): Promise<LintReport> {
  const run = promisify(execFile)(process.execPath, [REDOCLY_CLI, 'lint', documentUrl, '--config', 'redocly.yaml', '--format', 'json'], {
    env: { ...process.env, NODE_OPTIONS: '', REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    maxBuffer: 16 * 1024 * 1024,
  });
  // A document with errors exits 1 and still prints its report.
  const { stdout } = await run.catch((failure: { stdout?: string }) => ({ stdout: failure.stdout ?? '' }));
  return JSON.parse(stdout) as LintReport;
}

type Operation = { parameters?: unknown[]; requestBody?: unknown; responses: Record<string, unknown> };

describe('the OpenAPI document', () => {
  let t: TestApp;
  let documentUrl: string;
  beforeAll(async () => {
    t = await startTestApp({ jobs: false });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    documentUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/openapi.json`;
  });
  afterAll(() => t.close());

  it('passes redocly lint with the recommended rules: no errors, no warnings', async () => {
    const report = await redoclyLint(documentUrl);
    const problems = report.problems.map((problem) => `${problem.severity} ${problem.ruleId} at ${problem.location[0]?.pointer}: ${problem.message}`);
    expect(problems).toEqual([]);
    expect(report.totals).toEqual({ errors: 0, warnings: 0, ignored: 0 });
  }, 60_000);

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
