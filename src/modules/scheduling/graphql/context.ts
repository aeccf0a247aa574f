import type { PlatformContext } from '../../../platform/graphql/server.js';
import type { SchedulingLoaders } from './loaders.js';

export interface SchedulingContext extends PlatformContext {
  readonly scheduling: SchedulingLoaders;
}
