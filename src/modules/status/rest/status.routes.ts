import type { FastifyInstance } from 'fastify';
import type { StatusService } from '../status.service.js';
import { statusRoute } from './status.schemas.js';

/** `/api/status`: the report as the status service builds it. */
export function registerStatusRoutes(app: FastifyInstance, status: StatusService): void {
  app.get('/api/status', { schema: statusRoute }, async () => status.report());
}
