import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('loadConfig', () => {
  it('applies the contract defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      databaseUrl: undefined,
      dataDir: './.data',
      publicUrl: 'http://localhost:3000',
      mailFrom: 'no-reply@localhost',
      screenerUrl: 'https://api.dexscreener.com',
      aggregatorUrl: 'https://hermes.pyth.network',
      bookingCap: 500,
      rateLimitAnonPerMin: 60,
      rateLimitAuthPerMin: 600,
      webhookRetryBaseMs: 1000,
      webhookMaxAttempts: 10,
      webhookAllowPrivate: false,
      reminderLeadMinutes: 15,
      priceProviders: ['aws', 'azure', 'gcp', 'oci', 'lambda', 'runpod', 'vast'],
      logLevel: 'info',
    });
  });

  it('derives PUBLIC_URL from PORT and treats an empty PRICE_PROVIDERS as "none"', () => {
    const config = loadConfig({ PORT: '8080', PRICE_PROVIDERS: '' });
    expect(config.publicUrl).toBe('http://localhost:8080');
    expect(config.priceProviders).toEqual([]);
  });

  it.each([
    ['PORT', 'abc', /PORT must be a whole number/],
    ['PORT', '70000', /PORT must be at most 65535/],
    ['BOOKING_CAP', '0', /BOOKING_CAP must be at least 1/],
    ['DATABASE_URL', 'mysql://x', /DATABASE_URL must use postgres:/],
    ['WEBHOOK_ALLOW_PRIVATE', 'maybe', /WEBHOOK_ALLOW_PRIVATE must be true or false/],
    ['PRICE_PROVIDERS', 'aws,nope', /PRICE_PROVIDERS must list only/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL/],
    ['SMTP_URL', 'http://mail', /SMTP_URL must use smtp:/],
  ])('names %s when it is %p', (variable, value, message) => {
    expect(() => loadConfig({ [variable]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [variable]: value })).toThrow(message);
  });
});
