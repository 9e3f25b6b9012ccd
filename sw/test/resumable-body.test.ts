/**
 * A body that breaks off mid-stream resumes from another replica (real HTTP servers on
 * loopback, Node's fetch): 206 continuations, 200 answers (bytes skipped), changed
 * entities (the stream errors), no replica left, ranges, and the page cancelling.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyExtent, continuation, resumableBody } from '../src/resumable-body.js';
import type { ResumeReport, ResumeRequest } from '../src/resumable-body.js';

const FILE = randomBytes(300_000);
const OTHER_FILE = randomBytes(300_000);

interface Behaviour {
  /** Send this many bytes of a full-body answer, then destroy the socket. */
  breakAfterBytes?: number;
  /** Also cut 206 answers after breakAfterBytes. */
  breakRanges?: boolean;
  /** Send this many bytes of a full-body answer, then go silent with the socket open. */
  freezeAfterBytes?: number;
  /** Answer Range requests with the whole file (200). */
  ignoreRange?: boolean;
  etag?: string;
  file?: Buffer;
}

const servers: Server[] = [];
const seen = new Map<string, IncomingHttpHeaders[]>();

async function replica(name: string, behaviour: Behaviour): Promise<string> {
  const file = behaviour.file ?? FILE;
  const etag = behaviour.etag ?? '"v1"';
  const server = createServer((request, response) => {
    seen.set(name, [...(seen.get(name) ?? []), request.headers]);
    const range = /^bytes=(\d+)-(\d*)$/.exec(request.headers.range ?? '');
    const ifRange = request.headers['if-range'];
    if (range && !behaviour.ignoreRange && (ifRange === undefined || ifRange === etag)) {
      const start = Number(range[1]);
      const end = range[2] ? Number(range[2]) : file.length - 1;
      response.writeHead(206, { etag, 'content-range': `bytes ${start}-${end}/${file.length}`, 'content-length': end - start + 1 });
      if (behaviour.breakRanges && behaviour.breakAfterBytes !== undefined) {
        response.write(file.subarray(start, start + behaviour.breakAfterBytes), () => response.socket?.destroy());
        return;
      }
      response.end(file.subarray(start, end + 1));
      return;
    }
    response.writeHead(200, { etag, 'content-length': file.length });
    if (behaviour.freezeAfterBytes !== undefined && !range) {
      response.write(file.subarray(0, behaviour.freezeAfterBytes)); // and nothing more
      return;
    }
    if (behaviour.breakAfterBytes !== undefined && !range) {
      response.write(file.subarray(0, behaviour.breakAfterBytes), () => response.socket?.destroy());
      return;
    }
    response.end(file);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

let breaking: string;
let healthy: string;
let ignoresRange: string;
let changed: string;
let breaksToo: string;
let freezing: string;

beforeAll(async () => {
  breaking = await replica('breaking', { breakAfterBytes: 100_000 });
  healthy = await replica('healthy', {});
  ignoresRange = await replica('ignores-range', { ignoreRange: true });
  changed = await replica('changed', { etag: '"v2"', file: OTHER_FILE });
  // Breaks its full-body answers and its answers to Range requests alike, 50 000 bytes in.
  breaksToo = await replica('breaks-too', { breakAfterBytes: 50_000, breakRanges: true });
  freezing = await replica('freezing', { freezeAfterBytes: 100_000 });
});

afterAll(() => {
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
});

/** Reads a body while it resumes from `next` servers, in order; reports what happened. */
async function readResumed(first: string, next: string[], init: RequestInit = {}, idleTimeoutMs?: number) {
  const reports: ResumeReport[] = [];
  const requests: ResumeRequest[] = [];
  const broken: [string, number][] = [];
  let settled = 0;
  const response = await fetch(`${first}/file`, init);
  const body = resumableBody({
    response,
    server: first,
    fetchRest: async (request) => {
      requests.push(request);
      const server = next.find((candidate) => !request.exclude.has(candidate));
      if (!server) return undefined;
      const headers: Record<string, string> = { range: request.range };
      if (request.ifRange) headers['if-range'] = request.ifRange;
      return { server, response: await fetch(`${server}/file`, { headers }) };
    },
    onBroken: (server, atByte) => void broken.push([server, atByte]),
    onResumed: (report) => void reports.push(report),
    onSettled: () => void settled++,
    ...(idleTimeoutMs === undefined ? {} : { idleTimeoutMs }),
  });
  let bytes: Buffer | undefined;
  let error: unknown;
  try {
    bytes = Buffer.from(await new Response(body).arrayBuffer());
  } catch (caught) {
    error = caught;
  }
  return { response, bytes, error, reports, requests, broken, settled };
}

describe('resumableBody', () => {
  it('passes an unbroken body through unchanged', async () => {
    const { bytes, reports, requests } = await readResumed(healthy, []);
    expect(bytes?.equals(FILE)).toBe(true);
    expect(reports).toEqual([]);
    expect(requests).toEqual([]);
  });

  it('resumes a body that broke off with Range from the byte it broke at and If-Range, on a 206', async () => {
    const { bytes, reports, requests, broken, settled } = await readResumed(breaking, [healthy]);
    expect(bytes?.length).toBe(FILE.length);
    expect(bytes?.equals(FILE)).toBe(true);
    const atByte = requests[0]?.fromByte ?? -1;
    expect(atByte).toBeGreaterThan(0);
    expect(atByte).toBeLessThanOrEqual(100_000);
    expect(requests).toEqual([expect.objectContaining({ range: `bytes=${atByte}-`, ifRange: '"v1"' })]);
    expect(requests[0]?.exclude.has(breaking)).toBe(true);
    expect(broken).toEqual([[breaking, atByte]]);
    expect(reports).toEqual([{ from: breaking, atByte, to: healthy, ok: true }]);
    expect(settled).toBe(1);
  });

  it('skips the bytes the page already has when the next replica answers 200 with the whole entity', async () => {
    const { bytes, reports } = await readResumed(breaking, [ignoresRange]);
    expect(bytes?.equals(FILE)).toBe(true);
    expect(reports).toEqual([expect.objectContaining({ ok: true, to: ignoresRange })]);
  });

  it('errors the stream when the next replica has another entity (validators differ): no splicing', async () => {
    const { bytes, error, reports } = await readResumed(breaking, [changed]);
    expect(bytes).toBeUndefined();
    expect(error).toBeInstanceOf(Error);
    expect(reports).toEqual([expect.objectContaining({ ok: false, reason: expect.stringContaining('ETag') })]);
  });

  it('errors the stream when no other replica can send the rest', async () => {
    const { error, reports } = await readResumed(breaking, []);
    expect(error).toBeInstanceOf(Error);
    expect(reports).toEqual([expect.objectContaining({ ok: false, reason: 'no other replica answered' })]);
  });

  it('resumes a body that froze without an error (a partition) once it has been silent for idleTimeoutMs', async () => {
    const { bytes, error, requests, broken, reports, settled } = await readResumed(freezing, [healthy], {}, 300);
    expect(error).toBeUndefined();
    expect(bytes?.equals(FILE)).toBe(true);
    expect(broken).toEqual([[freezing, 100_000]]);
    expect(requests[0]?.range).toBe('bytes=100000-');
    expect(reports).toEqual([{ from: freezing, atByte: 100_000, to: healthy, ok: true }]);
    expect(settled).toBe(1);
  });

  it('resumes again when the replica that took over breaks too', async () => {
    const { bytes, error, reports, requests, broken, settled } = await readResumed(breaking, [breaksToo, healthy]);
    expect(error).toBeUndefined();
    expect(bytes?.equals(FILE)).toBe(true);
    // Two breaks: the first replica's body, then breaks-too's 206 continuation of it.
    const [first, second] = requests;
    expect(requests).toHaveLength(2);
    expect(first?.fromByte).toBeGreaterThan(0);
    expect(first?.fromByte).toBeLessThanOrEqual(100_000);
    expect(second?.fromByte).toBeGreaterThan(first!.fromByte);
    expect(second?.fromByte).toBeLessThanOrEqual(first!.fromByte + 50_000);
    expect(second?.range).toBe(`bytes=${second?.fromByte}-`);
    expect([...second!.exclude].sort()).toEqual([breaking, breaksToo].sort());
    expect(broken).toEqual([
      [breaking, first?.fromByte],
      [breaksToo, second?.fromByte],
    ]);
    expect(reports).toEqual([
      { from: breaking, atByte: first?.fromByte, to: breaksToo, ok: true },
      { from: breaksToo, atByte: second?.fromByte, to: healthy, ok: true },
    ]);
    expect(settled).toBe(1);
  });

  it('resumes a 206 answer to the page\'s own Range request within that range', async () => {
    // The first replica answers the range 1000-250999, but its connection is cut 50 000 bytes in.
    const cut = await replica('cuts-range', { breakAfterBytes: 50_000, breakRanges: true });
    const response = await fetch(`${cut}/file`, { headers: { range: 'bytes=1000-250999' } });
    expect(bodyExtent(response)).toMatchObject({ startByte: 1000, endByte: 250_999, totalBytes: FILE.length, strongEtag: '"v1"' });
    const requests: ResumeRequest[] = [];
    const body = resumableBody({
      response,
      server: cut,
      fetchRest: async (request) => {
        requests.push(request);
        return { server: healthy, response: await fetch(`${healthy}/file`, { headers: { range: request.range, 'if-range': request.ifRange! } }) };
      },
    });
    const bytes = Buffer.from(await new Response(body).arrayBuffer());
    expect(bytes.equals(FILE.subarray(1000, 251_000))).toBe(true);
    expect(requests).toHaveLength(1);
    expect(requests[0]?.range).toMatch(/^bytes=\d+-250999$/);
    expect(requests[0]?.fromByte).toBeGreaterThan(1000);
    expect(requests[0]?.fromByte).toBeLessThanOrEqual(51_000);
  });

  it('cancelling the page\'s stream cancels the replica\'s body', async () => {
    let settled = 0;
    const response = await fetch(`${healthy}/file`);
    const body = resumableBody({ response, server: healthy, fetchRest: async () => undefined, onSettled: () => void settled++ })!;
    const reader = body.getReader();
    await reader.read();
    await reader.cancel('page gone');
    expect(settled).toBe(1);
    expect(response.bodyUsed).toBe(true);
  });

  it('a body that names no entity (no ETag, Last-Modified or length: a generated stream) is passed on untouched', () => {
    const stream = new Response('data: 1\n\n', { status: 200, headers: { 'content-type': 'text/event-stream' } });
    stream.headers.delete('content-length');
    expect(bodyExtent(stream)).toBeUndefined();
    expect(resumableBody({ response: stream, server: healthy, fetchRest: async () => undefined })).toBe(stream.body);
    const named = (headers: Record<string, string>) => bodyExtent(new Response(null, { status: 200, headers }));
    expect(named({ etag: '"v1"' })).toMatchObject({ startByte: 0, totalBytes: undefined, strongEtag: '"v1"' });
    expect(named({ 'last-modified': 'Mon, 01 Jan 2024 00:00:00 GMT' })).toMatchObject({ startByte: 0 });
    expect(named({ 'content-length': '10' })).toMatchObject({ totalBytes: 10 });
  });

  it('continuation() accepts only the same entity from the right byte', () => {
    const first = bodyExtent(new Response('x'.repeat(10), { status: 200, headers: { etag: '"a"', 'content-length': '10' } }))!;
    const part = (etag: string, range: string) => new Response('x', { status: 206, headers: { etag, 'content-range': range } });
    expect(continuation(part('"a"', 'bytes 4-9/10'), first, 4)).toEqual({ skipBytes: 0 });
    expect(continuation(part('"a"', 'bytes 5-9/10'), first, 4)).toMatchObject({ error: expect.stringContaining('starts at 5') });
    // A range asked for earlier (a second fetch started mid-body): the bytes the page got since are skipped.
    expect(continuation(part('"a"', 'bytes 2-9/10'), first, 4)).toEqual({ skipBytes: 2 });
    expect(continuation(part('"b"', 'bytes 4-9/10'), first, 4)).toMatchObject({ error: expect.stringContaining('ETag') });
    expect(continuation(part('"a"', 'bytes 4-10/11'), first, 4)).toMatchObject({ error: expect.stringContaining('bytes') });
    expect(continuation(new Response('no', { status: 416 }), first, 4)).toMatchObject({ error: expect.stringContaining('416') });
    // Content-encoded first answers: the ETag names the encoded variant, Last-Modified decides.
    const encoded = bodyExtent(new Response('x', { status: 200, headers: { etag: '"gz"', 'content-encoding': 'gzip', 'last-modified': 'Mon, 01 Jan 2024 00:00:00 GMT' } }))!;
    expect(encoded).toMatchObject({ encoded: true, totalBytes: undefined });
    const identity = (lastModified: string) => new Response('x', { status: 206, headers: { etag: '"id"', 'last-modified': lastModified, 'content-range': 'bytes 4-9/10' } });
    expect(continuation(identity('Mon, 01 Jan 2024 00:00:00 GMT'), encoded, 4)).toEqual({ skipBytes: 0 });
    expect(continuation(identity('Tue, 02 Jan 2024 00:00:00 GMT'), encoded, 4)).toMatchObject({ error: expect.stringContaining('Last-Modified') });
  });

  it('continuation(): the same strong ETag is the same entity, even when another replica dates it differently', () => {
    // Found by CI: two replicas that stored the same bytes a second apart sent different
    // Last-Modified dates, and the resume was refused although If-Range (the ETag) matched.
    const dated = (status: number, etag: string, lastModified: string, extra: Record<string, string>) =>
      new Response('x', { status, headers: { etag, 'last-modified': lastModified, ...extra } });
    const first = bodyExtent(dated(200, '"sha256-a"', 'Tue, 24 Nov 2026 08:19:19 GMT', { 'content-length': '10' }))!;
    const resumed = dated(206, '"sha256-a"', 'Tue, 24 Nov 2026 08:19:18 GMT', { 'content-range': 'bytes 4-9/10' });
    expect(continuation(resumed, first, 4)).toEqual({ skipBytes: 0 });
    // Without a strong ETag to vouch for it, a different date is still a different entity.
    const weakFirst = bodyExtent(dated(200, 'W/"a"', 'Tue, 24 Nov 2026 08:19:19 GMT', { 'content-length': '10' }))!;
    const weakResumed = dated(206, 'W/"a"', 'Tue, 24 Nov 2026 08:19:18 GMT', { 'content-range': 'bytes 4-9/10' });
    expect(continuation(weakResumed, weakFirst, 4)).toMatchObject({ error: expect.stringContaining('Last-Modified') });
  });
});
