/** The JSON schema of the status route (seed 002). The report has no response schema: it is sent as the service builds it. */
import { SECURITY } from '../../../platform/http/openapi.js';

export const statusRoute = { operationId: 'getStatus', summary: 'Health, prices and usage of the gateway', tags: ['status'], security: SECURITY.public };
