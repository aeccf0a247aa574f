/**
 * Availability rules as every adapter takes and answers them (REST body, GraphQL input and type, MCP arguments):
 * one shape, hours as `HH:MM` on the agent's local wall clock.
 */

export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** `[start, end)` on the local wall clock, `HH:MM` (`end` may be `24:00`). */
export interface HoursInterval {
  start: string;
  end: string;
}

export interface WeeklyInterval extends HoursInterval {
  day: Weekday;
}

/** A date's own hours; none: the day is off. */
export interface DateOverride {
  /** `YYYY-MM-DD`, the agent's local date. */
  date: string;
  hours: HoursInterval[];
}

export interface AvailabilityRulesInput {
  /** IANA zone, e.g. `Europe/Berlin`: of the hours, the overrides' dates, and the days and weeks the limits count. */
  timeZone: string;
  /** Null or absent: no weekly hours (every day is open unless an override says otherwise). */
  weeklyHours?: WeeklyInterval[] | null | undefined;
  dateOverrides?: DateOverride[] | undefined;
  bufferBeforeMinutes?: number | undefined;
  bufferAfterMinutes?: number | undefined;
  minimumNoticeMinutes?: number | undefined;
  maximumAdvanceDays?: number | null | undefined;
  dailyLimit?: number | null | undefined;
  weeklyLimit?: number | null | undefined;
  enforceOnOwnBookings?: boolean | undefined;
}

export interface AvailabilityRulesView {
  agentId: string;
  timeZone: string;
  weeklyHours: WeeklyInterval[] | null;
  dateOverrides: DateOverride[];
  bufferBeforeMinutes: number;
  bufferAfterMinutes: number;
  minimumNoticeMinutes: number;
  maximumAdvanceDays: number | null;
  dailyLimit: number | null;
  weeklyLimit: number | null;
  enforceOnOwnBookings: boolean;
  updatedAt: string;
}

/** What one set of rules may hold; /openapi.json, the GraphQL descriptions and the MCP schemas state the same. */
export const RULE_LIMITS = {
  intervalsPerDay: 12,
  /** Intervals over the whole week. */
  weeklyIntervals: 7 * 12,
  dateOverrides: 400,
  bufferMaxMinutes: 720,
  noticeMaxMinutes: 43_200,
  advanceMaxDays: 1_095,
  dailyLimitMax: 1_000,
  weeklyLimitMax: 5_000,
  timeZoneMaxLength: 64,
  /** The longest window `workingTime` answers (a month view); at most 12 intervals a local day, two passes of a repeated hour. */
  workingTimeMaxDays: 31,
} as const;
