import { mkdtemp, rm, utimes, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { filesUnder, hashInputs, stampAfterRun, staleness } from '../../scripts/build.js';

describe('the build steps skipped by npm start (scripts/build.ts)', () => {
  let root: string;
  const step = { command: ['tsc', '-p', 'tsconfig.build.json'], outputs: ['dist/main.js'] };
  const inputs = () => hashInputs(root, filesUnder(root, 'src'));

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'build-stamps-'));
    await mkdir(join(root, 'src/web'), { recursive: true });
    await mkdir(join(root, 'dist'));
    await writeFile(join(root, 'src/main.ts'), 'export const a = 1;\n');
    await writeFile(join(root, 'src/web/page.ts'), 'export const b = 2;\n');
    await writeFile(join(root, 'dist/main.js'), 'built');
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('skips a step whose outputs exist and whose inputs are those it was built from', () => {
    const stamp = stampAfterRun(root, step, inputs(), [], Date.now());
    expect(staleness(root, step, stamp, inputs())).toBeUndefined();
  });

  it('skips it when a file was only touched, not changed', async () => {
    const stamp = stampAfterRun(root, step, inputs(), [], Date.now());
    const later = new Date(Date.now() + 60_000);
    await utimes(join(root, 'src/main.ts'), later, later);
    expect(staleness(root, step, stamp, inputs())).toBeUndefined();
  });

  it('runs it again, naming the file, when an input changed, was added or was removed', async () => {
    const stamp = stampAfterRun(root, step, inputs(), [], Date.now());
    await writeFile(join(root, 'src/main.ts'), 'export const a = 3;\n');
    expect(staleness(root, step, stamp, inputs())).toBe('src/main.ts changed');

    const second = stampAfterRun(root, step, inputs(), [], Date.now());
    await writeFile(join(root, 'src/extra.ts'), 'export {};\n');
    expect(staleness(root, step, second, inputs())).toBe('src/extra.ts is new');

    await rm(join(root, 'src/extra.ts'));
    await rm(join(root, 'src/web/page.ts'));
    expect(staleness(root, step, second, inputs())).toBe('src/web/page.ts changed');
  });

  it('runs it when an output is missing, when it never ran, or when its command changed', async () => {
    const stamp = stampAfterRun(root, step, inputs(), [], Date.now());
    expect(staleness(root, step, undefined, inputs())).toBe('never built by this command');
    expect(staleness(root, { ...step, command: ['tsc', '--build'] }, stamp, inputs())).toBe('never built by this command');
    await rm(join(root, 'dist/main.js'));
    expect(staleness(root, step, stamp, inputs())).toBe('dist/main.js is missing');
  });

  it('follows an input the step reported itself (a file a bundle imported from outside its folder)', async () => {
    const webInputs = () => hashInputs(root, filesUnder(root, 'src/web'));
    const started = Date.now() + 60_000; // the file predates the run
    const stamp = stampAfterRun(root, step, webInputs(), ['src/main.ts'], started);
    expect(staleness(root, step, stamp, webInputs())).toBeUndefined();
    await writeFile(join(root, 'src/main.ts'), 'export const a = 4;\n');
    expect(staleness(root, step, stamp, webInputs())).toBe('src/main.ts changed');
  });

  it('does not trust a reported input that changed while the step ran', async () => {
    const started = Date.now() - 60_000; // the file was written after the run began
    const stamp = stampAfterRun(root, step, hashInputs(root, filesUnder(root, 'src/web')), ['src/main.ts'], started);
    expect(staleness(root, step, stamp, hashInputs(root, filesUnder(root, 'src/web')))).toBe('src/main.ts changed');
  });

  it('lists the folders it was asked for, without the skipped one', () => {
    expect(filesUnder(root, 'src', ['src/web']).sort()).toEqual(['src/main.ts']);
  });
});
