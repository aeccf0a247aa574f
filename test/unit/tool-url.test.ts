import { describe, expect, it } from '@jest/globals';
import { normalizeToolUrl, slugify } from '../../src/modules/directory/tool-url.js';

describe('normalizeToolUrl', () => {
  it.each([
    ['HTTPS://Example.COM:443/App/', 'https://example.com/App'],
    ['http://example.com:80', 'http://example.com'],
    ['http://example.com:8080/', 'http://example.com:8080'],
    ['https://example.com/path///', 'https://example.com/path'],
    ['https://example.com/a?b=1', 'https://example.com/a?b=1'],
  ])('normalises %s to %s', (raw, normalized) => {
    expect(normalizeToolUrl(raw)).toBe(normalized);
  });

  it.each(['not a url', 'ftp://example.com', 'mailto:me@example.com', '/relative'])('refuses %s', (raw) => {
    expect(normalizeToolUrl(raw)).toBeUndefined();
  });
});

describe('slugify', () => {
  it.each([
    ['My Tool 2.0!', 'my-tool-2-0'],
    ['Café Crème', 'cafe-creme'],
    ['***', 'tool'],
  ])('slugifies %s', (name, slug) => {
    expect(slugify(name)).toBe(slug);
  });
});
