/**
 * A start-up failure the operator fixes through one setting (a bad value, a port or a data folder that
 * cannot be had). The process entry prints its message as one line on stderr, without a stack, and
 * exits non-zero; the message names the variable and says what would work.
 */
export class SettingError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = 'SettingError';
  }
}
