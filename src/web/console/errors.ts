import { ApiError } from '../browse/api.js';

/** The API's error codes (`extensions.code`) in the words a person reads. */
const PLAIN_WORDS: Record<string, string> = {
  unauthorized: 'The agent token was not accepted. Sign in again with a valid token.',
  forbidden: 'This agent is not allowed to do that.',
  not_found: 'That no longer exists (it may have been removed meanwhile).',
  conflict: 'That conflicts with something that already exists.',
  limit_exceeded: 'A limit was reached: remove something first.',
  slot_taken: 'That time overlaps another booking on the calendar.',
  proposal_not_pending: 'That proposal has already been answered or withdrawn.',
  booking_cap_reached: 'The agent has reached its limit of live bookings.',
  bad_rrule: 'The stored repeat rule cannot be read any more: cancel the series and create it again.',
  rate_limited: 'Too many requests: wait a moment and try again.',
  upstream_unavailable: 'A service the gateway depends on is not answering. Try again shortly.',
  unavailable: 'The gateway cannot reach its database right now. Try again shortly.',
  network: 'The server cannot be reached. Check your connection and try again.',
  version_mismatch: 'That booking was changed elsewhere since the page showed it: reload and try again.',
  hold_expired: 'The hold expired before it was confirmed: its time was never booked. Hold it again.',
  hold_released: 'The hold was released: its time was never booked.',
  buffer_conflict: 'That time is free, but the buffer kept around another booking overlaps it.',
  outside_working_hours: 'That time is outside the agent’s working hours.',
  notice_too_short: 'That starts too soon for the agent’s minimum notice.',
  too_far_ahead: 'That is further ahead than the agent’s maximum advance allows.',
  daily_limit_reached: 'The agent’s limit of bookings for that day is reached.',
  weekly_limit_reached: 'The agent’s limit of bookings for that week is reached.',
};

/** Field names of validation errors as the forms label them. */
const FIELD_NAMES: Record<string, string> = {
  startsAt: 'Start',
  endsAt: 'End',
  rrule: 'Repeat',
  url: 'URL',
  events: 'Events',
  name: 'Name',
  targetAgentId: 'Agent',
  to: 'Window',
  from: 'Window',
  timeZone: 'Time zone',
  bufferBeforeMinutes: 'Buffer before',
  bufferAfterMinutes: 'Buffer after',
  minimumNoticeMinutes: 'Minimum notice',
  maximumAdvanceDays: 'Maximum advance',
  dailyLimit: 'Daily limit',
  weeklyLimit: 'Weekly limit',
};

/** One sentence for any failure: the code's plain words; for a validation error, which field and why. */
export function describeError(error: unknown): string {
  if (!(error instanceof ApiError)) return error instanceof Error ? error.message : 'Something went wrong.';
  if (error.code === 'validation' || Object.keys(error.fields).length) {
    const [field, message] = Object.entries(error.fields)[0] ?? [];
    return field ? `${FIELD_NAMES[field] ?? field} ${message}.` : error.message;
  }
  return PLAIN_WORDS[error.code] ?? error.message;
}
