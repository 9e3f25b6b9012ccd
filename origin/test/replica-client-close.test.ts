/**
 * A client that closes its connection as soon as it has a stored replica's body (curl
 * does) used to race the file stream's end: Fastify destroyed the response, took the
 * request as unanswered, routed it on to the 404 handler and logged a 500 ("Attempted to
 * send payload of invalid type") for a request that had been answered correctly.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { startReplicaServer } from '../src/server.js';
import { ADMIN_TOKEN, auth, removeTempDirs, tempDir } from './helpers.js';

afterAll(removeTempDirs);

/** GET over a raw socket, destroyed the moment `bodyBytes` of body have arrived. */
function getAndHangUp(port: number, path: string, bodyBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
      const split = received.indexOf('\r\n\r\n');
      if (split >= 0 && received.length - split - 4 >= bodyBytes) {
        socket.destroy();
        resolve(received);
      }
    });
    socket.on('error', reject);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: */*\r\n\r\n`);
  });
}

describe('a stored replica whose client hangs up right after the body', () => {
  it('is answered once, and nothing is logged as an error', async () => {
    const lines: { level: number; msg?: string }[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as { level: number; msg?: string });
        done();
      },
    });
    const server = await startReplicaServer({ dataDir: await tempDir(), adminToken: ADMIN_TOKEN, logger: { level: 'info', stream } });
    try {
      const base = `http://127.0.0.1:${server.port}`;
      const contents = { '/blob.bin': 'application/octet-stream', '/image.png': 'image/png', '/note.txt': 'text/plain' };
      for (const [path, type] of Object.entries(contents)) {
        const created = await fetch(`${base}/.well-known/webpp/replicas${path}`, { method: 'POST', headers: { ...auth, 'content-type': type }, body: 'xx' });
        expect(created.status).toBe(201);
      }
      for (let round = 0; round < 20; round += 1) {
        for (const path of Object.keys(contents)) {
          const answer = await getAndHangUp(server.port, path, 2);
          expect(answer.startsWith('HTTP/1.1 200 OK')).toBe(true);
          expect(answer.endsWith('\r\n\r\nxx')).toBe(true);
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      const problems = lines.filter((line) => line.level >= 40);
      expect(problems.map((line) => line.msg)).toEqual([]);
      expect(lines.filter((line) => line.msg?.includes('not found'))).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
