/**
 * A position in PostgreSQL's write-ahead log (type `pg_lsn`), as PostgreSQL prints it: two
 * hexadecimal halves of a 64-bit byte offset, `16/B374D848`. Positions only grow on one timeline, so
 * "a standby has replayed up to X" answers "does it show every commit that ended before X".
 */
const PATTERN = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/i;

/** The position `text` names, or undefined when it is not one. */
export function parseWalPosition(text: string): bigint | undefined {
  const match = PATTERN.exec(text);
  if (!match) return undefined;
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

/** The position as PostgreSQL prints it. */
export function formatWalPosition(position: bigint): string {
  return `${(position >> 32n).toString(16).toUpperCase()}/${(position & 0xffffffffn).toString(16).toUpperCase()}`;
}

/** The later of two positions, an absent one counting as none. */
export function laterWalPosition(a: bigint | undefined, b: bigint | undefined): bigint | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a > b ? a : b;
}
