import { describe, expect, it } from '@jest/globals';
import { redactUrl } from '../../src/platform/logger.js';

describe('redactUrl', () => {
  it('cuts one-time tokens out of logged URLs and leaves the rest', () => {
    expect(redactUrl('/browse?token=abc123&view=tools')).toBe('/browse?token=[redacted]&view=tools');
    expect(redactUrl('/browse?view=tools&Token=abc')).toBe('/browse?view=tools&Token=[redacted]');
    expect(redactUrl('/api/tools?page=2')).toBe('/api/tools?page=2');
  });
});
