/**
 * A loopback TCP forwarder whose target is set after it listens: tests bind every public
 * port first (port 0), then start the servers that need to know those ports, then connect
 * the two. No port is ever guessed or reserved.
 */
import net, { type AddressInfo, type Socket } from 'node:net';

export interface TcpForwarder {
  readonly port: number;
  /** Where connections go from now on ("127.0.0.1", port). */
  setTarget(port: number): void;
  close(): Promise<void>;
}

export async function startTcpForwarder(): Promise<TcpForwarder> {
  let targetPort: number | undefined;
  const sockets = new Set<Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    if (targetPort === undefined) {
      client.destroy();
      return;
    }
    const upstream = net.connect({ host: '127.0.0.1', port: targetPort });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    client.pipe(upstream).pipe(client);
    // A dead upstream looks like a dead server to the client: reset, not hang.
    upstream.on('error', () => client.resetAndDestroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    setTarget(port: number) {
      targetPort = port;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
