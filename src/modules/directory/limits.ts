/**
 * Sign-in bounds, once: the service checks them, and the REST schemas and the entity column lengths
 * are written from them (here rather than in the service, which imports the entities).
 */
export const ACCOUNT_LIMITS = {
  /** RFC 5321's longest deliverable address. */
  emailMaxLength: 254,
  /** What the REST schema and the service call a valid address (`format: email`). */
  emailDescription: 'an e-mail address',
  /** A magic-link token as sent back (ours are 43 characters; longer is never one). */
  magicLinkTokenMaxLength: 200,
} as const;
