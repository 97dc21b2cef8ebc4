import type { IncomingMessage } from 'node:http';
import { canonicalIp } from '@stickers/shared';

/** Each connection's caller address, worked out once per connection (it never changes), not once per request. */
const callerAddresses = new WeakMap<object, string>();

/** The caller's address as the rate limits and the lockout see it: the socket's peer, canonical (no proxy header). */
export function callerAddress(req: IncomingMessage): string {
  let address = callerAddresses.get(req.socket);
  if (address === undefined) {
    const raw = req.socket.remoteAddress ?? 'unknown';
    address = canonicalIp(raw) ?? raw;
    callerAddresses.set(req.socket, address);
  }
  return address;
}
