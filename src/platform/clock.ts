/** Business time. Services ask a `Clock` rather than `new Date()` so tests can pin "now". */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
