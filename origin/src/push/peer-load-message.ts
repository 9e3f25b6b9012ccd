/**
 * The message peers exchange their pushed service times with (issue 13):
 *
 *   POST /.well-known/webpp/peer/load/v1     signed with the cluster secret (http/auth.ts)
 *   body and answer: {"server":"<its publicUrl>","serviceMs":12.5,"ageMs":300,"sentAtMs":1732435200000}
 *
 * The answer carries the receiver's own value, so one round trip updates both sides.
 * `sentAtMs` is the sender's clock and only ever compared with the same sender's earlier
 * messages: a captured message replayed later is not newer, so it changes nothing.
 */
import { WEBPP_ERR_BAD_BODY } from '../errors.js';

export const PEER_LOAD_PATH = '/.well-known/webpp/peer/load/v1';
export const MAX_PEER_LOAD_BYTES = 4096;

export interface PeerLoadMessage {
  server: string;
  serviceMs: number;
  ageMs: number;
  sentAtMs: number;
}

const MAX_MS = 86_400_000;

/** @throws WEBPP_ERR_BAD_BODY unless `body` is one well-formed message. */
export function parsePeerLoadMessage(body: Uint8Array): PeerLoadMessage {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(body));
  } catch {
    throw new WEBPP_ERR_BAD_BODY('expected JSON');
  }
  const message = value as Partial<Record<keyof PeerLoadMessage, unknown>> | null;
  if (typeof message !== 'object' || message === null) throw new WEBPP_ERR_BAD_BODY('expected a JSON object');
  const { server, serviceMs, ageMs, sentAtMs } = message;
  if (typeof server !== 'string' || server.length > 2048) throw new WEBPP_ERR_BAD_BODY('"server" must be an origin');
  const inRange = (field: unknown, max: number): field is number => typeof field === 'number' && Number.isFinite(field) && field >= 0 && field <= max;
  if (!inRange(serviceMs, MAX_MS)) throw new WEBPP_ERR_BAD_BODY('"serviceMs" must be a number of ms in [0, 86400000]');
  if (!inRange(ageMs, MAX_MS)) throw new WEBPP_ERR_BAD_BODY('"ageMs" must be a number of ms in [0, 86400000]');
  if (!inRange(sentAtMs, Number.MAX_SAFE_INTEGER)) throw new WEBPP_ERR_BAD_BODY('"sentAtMs" must be a timestamp in ms');
  return { server, serviceMs, ageMs, sentAtMs };
}

export function encodePeerLoadMessage(message: PeerLoadMessage): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(message));
}
