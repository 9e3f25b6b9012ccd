/**
 * A TCP delay line on 127.0.0.1: every byte takes rttMs / 2 in each direction, and a new
 * connection's first byte waits one more RTT (the TCP handshake). Protocol-agnostic, so it
 * carries HTTP/1.1, TLS and HTTP/2 alike (the netem emulator is an HTTP/1.1 proxy). No
 * bandwidth limit (loopback). When the server behind it is down, the client's connection
 * is closed as soon as the upstream connect fails.
 */
import net, { type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface TcpDelayLine {
  port: number;
  /** The round trip now; changes apply to bytes sent from then on. */
  rttMs: number;
  setUpstream(port: number): void;
  /** A dead machine: the port refuses connections and open ones are dropped, until accept(). */
  refuse(): Promise<void>;
  /** Listens again on the same port. */
  accept(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpDelayLine(initialRttMs: number): Promise<TcpDelayLine> {
  let upstreamPort = 0;
  const sockets = new Set<Socket>();
  const line = { rttMs: initialRttMs };
  const pipe = (from: Socket, to: Socket, firstByteNotBeforeMs: number): void => {
    let lastDueMs = 0;
    const at = (dueMs: number, action: () => void): void => {
      lastDueMs = Math.max(lastDueMs, dueMs);
      setTimeout(action, Math.max(0, lastDueMs - performance.now()));
    };
    const oneWayMs = (): number => line.rttMs / 2;
    from.on('data', (chunk: Buffer) => at(Math.max(performance.now(), firstByteNotBeforeMs) + oneWayMs(), () => to.destroyed || to.write(chunk)));
    from.on('end', () => at(performance.now() + oneWayMs(), () => to.destroyed || to.end()));
    from.on('error', () => at(performance.now() + oneWayMs(), () => to.destroy()));
    from.on('close', () => at(performance.now() + oneWayMs(), () => to.destroy()));
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(upstreamPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.on('close', () => sockets.delete(client));
    upstream.on('close', () => sockets.delete(upstream));
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    pipe(client, upstream, performance.now() + line.rttMs);
    pipe(upstream, client, 0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const stopListening = async (): Promise<void> => {
    for (const socket of sockets) socket.destroy();
    if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    port,
    get rttMs() {
      return line.rttMs;
    },
    set rttMs(value: number) {
      line.rttMs = value;
    },
    setUpstream: (port) => {
      upstreamPort = port;
    },
    refuse: stopListening,
    accept: async () => {
      if (!server.listening) await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    },
    close: stopListening,
  };
}
