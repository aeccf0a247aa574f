declare module 'libqp' {
  /** Decodes a quoted-printable string. */
  export function decode(input: string): Buffer;
}
