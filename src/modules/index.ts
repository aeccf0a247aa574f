/**
 * The gateway's modules as the composition root sees them. Platform code never imports from here;
 * `app.ts` and the CLI do.
 */
import { schedulingEntities, schedulingResolvers } from './scheduling/index.js';

export const entities = [...schedulingEntities];
export const resolverClasses = [...schedulingResolvers];

export { createSchedulingModule, type SchedulingContext } from './scheduling/index.js';
