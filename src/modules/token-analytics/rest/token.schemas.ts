/** The JSON schemas of the token routes (seed 002): validation, serialisation and the OpenAPI document. */
import { SECURITY } from '../../../platform/http/openapi.js';
import { MINT } from '../token-analytics.service.js';

const EXAMPLE_MINT = 'So11111111111111111111111111111111111111112';
const mintParams = {
  type: 'object',
  required: ['mint'],
  properties: { mint: { type: 'string', pattern: MINT.pattern, description: MINT.description, examples: [EXAMPLE_MINT] } },
} as const;
const errorBody = { type: 'object', properties: { error: { type: 'string' }, message: { type: 'string' } } } as const;
const errors = {
  400: { ...errorBody, description: 'The mint is not a base58 mint of 32 to 44 characters' },
  404: { ...errorBody, description: 'The screener knows no pairs for this mint' },
  429: { ...errorBody, description: 'This address spent its RATE_LIMIT_TOKENS_PER_MIN reads (`Retry-After` says when to try again)' },
  503: { ...errorBody, description: 'The screener cannot be reached and nothing is cached for this mint' },
};

/** How both token routes read the screener, in one place for both descriptions. */
const SOURCING =
  'From the DEX screener’s pairs of the token (Solana pairs when it has any): an answer younger than a minute is served from the cache; ' +
  'when the screener cannot be reached the last good answer is served with `stale: true`. No credential; each client address may read ' +
  'RATE_LIMIT_TOKENS_PER_MIN times a minute (`RateLimit-*` headers).';
const exampleProvenance = { source: 'dexscreener', fetched_at: '2031-05-06T13:59:31.000Z', age_seconds: 29, stale: false } as const;

// These schemas also serialise the answers: every member token.view.ts writes is declared, with its nulls.
const nullableNumber = { type: ['number', 'null'] } as const;
const nullableString = { type: ['string', 'null'] } as const;

const provenanceProperties = {
  source: { type: 'string', description: 'The screener that answered.' },
  fetched_at: { type: 'string', format: 'date-time', description: 'When the screener answered.' },
  age_seconds: { type: 'integer', description: 'How old the answer is.' },
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
  description: 'The token’s numbers, from its most liquid pair (`main_pair`) and the sum over its pairs',
  examples: [
    {
      mint: EXAMPLE_MINT,
      token: { name: 'Wrapped SOL', symbol: 'SOL' },
      price_usd: 151.5,
      liquidity_usd: 48_210_334.5,
      volume_24h_usd: 912_004_118.2,
      txns_24h: { buys: 412_033, sells: 398_120 },
      price_change_pct: { m5: 0.1, h1: -0.4, h6: 1.2, h24: 3.8 },
      fdv_usd: 88_031_000_000,
      market_cap_usd: 71_440_000_000,
      main_pair: {
        address: '58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2',
        dex: 'raydium',
        quote_symbol: 'USDC',
        liquidity_usd: 21_377_880.1,
        url: 'https://dexscreener.com/solana/58oqchx4ywmvkdwllzzbi4chocc2fqcuwbkwmihlyqo2',
        created_at: '2021-08-12T10:00:00.000Z',
      },
      pair_count: 30,
      ...exampleProvenance,
    },
  ],
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
    missing_inputs: { type: 'array', items: { type: 'string' }, description: 'Inputs the screener did not give: their checks do not count.' },
    ...provenanceProperties,
  },
  description: 'The safety score with every check that made it',
  examples: [
    {
      mint: EXAMPLE_MINT,
      score: 70,
      rating: 'low_risk',
      checks: [
        { name: 'liquidity_depth', description: 'Total USD liquidity across pairs', weight: 25, threshold: '>= 50000', value: 48_210_334.5, passed: true },
        { name: 'pair_age', description: 'Age of the main pair in days', weight: 15, threshold: '>= 7', value: 3554.2, passed: true },
        { name: 'buy_sell_imbalance', description: 'Share of buys among 24 h trades', weight: 15, threshold: 'between 0.2 and 0.8', value: 0.51, passed: true },
        { name: 'volume_liquidity_anomaly', description: '24 h volume divided by liquidity', weight: 15, threshold: '<= 10', value: 18.92, passed: false },
        { name: 'fdv_liquidity', description: 'Fully diluted valuation divided by liquidity', weight: 15, threshold: '<= 100', value: 1826.03, passed: false },
        {
          name: 'pair_concentration',
          description: 'Share of liquidity in the main pair',
          weight: 15,
          threshold: '<= 0.9, or a single pair holding >= 250000',
          value: 0.44,
          passed: true,
        },
      ],
      missing_inputs: [],
      ...exampleProvenance,
    },
  ],
} as const;

export const analyticsRoute = {
  operationId: 'getTokenAnalytics',
  summary: 'Price, liquidity, volume and trades of a token from its DEX pairs',
  description: `Price, price changes, FDV and market cap from the most liquid pair; liquidity, 24 h volume and trades summed over the pairs. ${SOURCING}`,
  tags: ['tokens'],
  security: SECURITY.public,
  params: mintParams,
  response: { 200: analyticsBody, ...errors },
};

export const safetyRoute = {
  operationId: 'getTokenSafety',
  summary: 'A 0–100 safety score with named, weighted checks',
  description:
    'The weighted share of checks passed, as 0–100: liquidity depth, pair age, buy/sell balance, volume against liquidity, FDV against ' +
    'liquidity and concentration in the main pair, each with its weight and threshold in `checks`; ' +
    `\`low_risk\` from 70, \`medium_risk\` from 40, \`high_risk\` below. A check whose input is missing does not count either way. ${SOURCING}`,
  tags: ['tokens'],
  security: SECURITY.public,
  params: mintParams,
  response: { 200: safetyBody, ...errors },
};
