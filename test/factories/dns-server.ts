import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { isIPv4, isIPv6 } from 'node:net';
import ipaddr from 'ipaddr.js';

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, for DNS_SERVERS. */
  address: string;
  /** Names asked for, in order (one entry per datagram). */
  queries: string[];
  close(): Promise<void>;
}

const TYPE_A = 1;
const TYPE_AAAA = 28;

/**
 * A name server on a local UDP port. `answers` maps a name to its addresses: the IPv4 ones answer its
 * A question, the IPv6 ones its AAAA question; every other question gets an empty NOERROR answer.
 * Without `answers` it never replies, as a name server behind a black-holed network does.
 */
export async function startDnsServer(answers?: Record<string, string | readonly string[]>): Promise<TestDnsServer> {
  const socket: Socket = createSocket('udp4');
  const queries: string[] = [];
  socket.on('message', (message, peer) => {
    const question = readQuestion(message);
    if (!question) return;
    queries.push(question.name);
    if (!answers) return;
    const known = answers[question.name] ?? [];
    const addresses = (typeof known === 'string' ? [known] : known).filter(
      (address) => (question.type === TYPE_A && isIPv4(address)) || (question.type === TYPE_AAAA && isIPv6(address)),
    );
    const header = Buffer.alloc(12);
    message.copy(header, 0, 0, 2); // the query's id
    header.writeUInt16BE(0x8180, 2); // a response, recursion available, no error
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(addresses.length, 6);
    const records = addresses.map((address) => {
      const data = Buffer.from(ipaddr.parse(address).toByteArray());
      return Buffer.concat([
        Buffer.from([0xc0, 0x0c]), // the name: a pointer to the question's
        uint16(question.type),
        uint16(1), // class IN
        Buffer.from([0, 0, 0, 60]), // TTL
        uint16(data.length),
        data,
      ]);
    });
    socket.send(Buffer.concat([header, message.subarray(12, question.end), ...records]), peer.port, peer.address);
  });
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  return {
    address: `127.0.0.1:${socket.address().port}`,
    queries,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}

function uint16(value: number): Buffer {
  const buffer = Buffer.alloc(2);
  buffer.writeUInt16BE(value);
  return buffer;
}

function readQuestion(message: Buffer): { name: string; type: number; end: number } | undefined {
  const labels: string[] = [];
  let offset = 12;
  while (offset < message.length && message[offset] !== 0) {
    const length = message[offset]!;
    labels.push(message.subarray(offset + 1, offset + 1 + length).toString('ascii'));
    offset += 1 + length;
  }
  if (offset + 5 > message.length) return undefined;
  return { name: labels.join('.').toLowerCase(), type: message.readUInt16BE(offset + 1), end: offset + 5 };
}
