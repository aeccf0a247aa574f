/** The JSON schemas of the token routes (seed 002): validation, serialisation and the OpenAPI document. */
import { SECURITY } from '../../../platform/http/openapi.js';
import { MINT } from '../token-analytics.service.js';

const mintParams = { type: 'object', required: ['mint'], properties: { mint: { type: 'string', pattern: MINT.pattern, description: MINT.description } } } as const;
const errorBody = { type: 'object', properties: { error: { type: 'string' }, message: { type: 'string' } } } as const;
const errors = { 400: errorBody, 404: errorBody, 429: errorBody, 503: errorBody };

// These schemas also serialise the answers: every member token.view.ts writes is declared, with its nulls.
const nullableNumber = { type: ['number', 'null'] } as const;
const nullableString = { type: ['string', 'null'] } as const;

const provenanceProperties = {
  source: { type: 'string' },
  fetched_at: { type: 'string', format: 'date-time' },
  age_seconds: { type: 'integer' },
  stale: { type: 'boolean', description: 'The screener could not be reached and this is the last good answer.' },
} as const;
const provenanceRequired = ['source', 'fetched_at', 'age_seconds', 'stale'] as const;

const analyticsBody = {
  type: 'object',
  additionalProperties: false,
  required: [
    'mint', 'token', 'price_usd', 'liquidity_usd', 'volume_24h_usd', 'txns_24h', 'price_change_pct',
    'fdv_usd', 'market_cap_usd', 'main_pair', 'pair_count', ...provenanceRequired,
  ],
  properties: {
    mint: { type: 'string' },
    token: { type: 'object', additionalProperties: false, required: ['name', 'symbol'], properties: { name: nullableString, symbol: nullableString } },
    price_usd: nullableNumber,
    liquidity_usd: { type: 'number' },
    volume_24h_usd: { type: 'number' },
    txns_24h: { type: 'object', additionalProperties: false, required: ['buys', 'sells'], properties: { buys: { type: 'number' }, sells: { type: 'number' } } },
    price_change_pct: {
      type: 'object',
      additionalProperties: false,
      required: ['m5', 'h1', 'h6', 'h24'],
      properties: { m5: nullableNumber, h1: nullableNumber, h6: nullableNumber, h24: nullableNumber },
    },
    fdv_usd: nullableNumber,
    market_cap_usd: nullableNumber,
    main_pair: {
      type: ['object', 'null'],
      additionalProperties: false,
      required: ['address', 'dex', 'quote_symbol', 'liquidity_usd', 'url', 'created_at'],
      properties: {
        address: { type: 'string' },
        dex: { type: 'string' },
        quote_symbol: nullableString,
        liquidity_usd: { type: 'number' },
        url: nullableString,
        created_at: { type: ['string', 'null'], format: 'date-time' },
      },
    },
    pair_count: { type: 'integer' },
    ...provenanceProperties,
  },
} as const;

const safetyBody = {
  type: 'object',
  additionalProperties: false,
  required: ['mint', 'score', 'rating', 'checks', 'missing_inputs', ...provenanceRequired],
  properties: {
    mint: { type: 'string' },
    score: { type: 'integer', minimum: 0, maximum: 100 },
    rating: { type: 'string', enum: ['low_risk', 'medium_risk', 'high_risk'] },
    checks: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'description', 'weight', 'threshold', 'value', 'passed'],
        properties: {
          name: { type: 'string' },
          description: { type: 'string' },
          weight: { type: 'number' },
          threshold: { type: 'string' },
          value: nullableNumber,
          passed: { type: ['boolean', 'null'], description: 'null when the input was missing: the check does not count either way.' },
        },
      },
    },
    missing_inputs: { type: 'array', items: { type: 'string' } },
    ...provenanceProperties,
  },
} as const;

export const analyticsRoute = {
  operationId: 'getTokenAnalytics',
  summary: 'Price, liquidity, volume and trades of a token from its DEX pairs',
  tags: ['tokens'],
  security: SECURITY.public,
  params: mintParams,
  response: { 200: analyticsBody, ...errors },
};

export const safetyRoute = {
  operationId: 'getTokenSafety',
  summary: 'A 0–100 safety score with named, weighted checks',
  tags: ['tokens'],
  security: SECURITY.public,
  params: mintParams,
  response: { 200: safetyBody, ...errors },
};
