import { decode as decodeQuotedPrintable } from 'libqp';
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';

export interface ReceivedMail {
  to: string[];
  raw: string;
  /** The text/plain part, transfer encoding removed. */
  text: string;
}

/** A real SMTP server on loopback (npm smtp-server) that keeps what it receives. */
export async function startSmtpServer(): Promise<{ url: string; mails: ReceivedMail[]; close(): Promise<void> }> {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
      stream.on('end', () => {
        mails.push({ to: session.envelope.rcptTo.map((rcpt) => rcpt.address), raw, text: plainText(raw) });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function plainText(raw: string): string {
  const part = /Content-Type: text\/plain[^\r\n]*\r?\n(?:[^\r\n]+\r?\n)*?Content-Transfer-Encoding: ([\w-]+)\r?\n\r?\n([\s\S]*?)(?:\r?\n--|$)/i.exec(raw);
  if (!part) return raw;
  const [, encoding, body] = part;
  if (encoding?.toLowerCase() === 'quoted-printable') return decodeQuotedPrintable(body ?? '').toString('utf8');
  if (encoding?.toLowerCase() === 'base64') return Buffer.from(body ?? '', 'base64').toString('utf8');
  return body ?? '';
}
