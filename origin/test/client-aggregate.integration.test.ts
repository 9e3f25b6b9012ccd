/**
 * The client aggregate for first visits (issue 13 §6) with a real server on loopback: off by
 * default; reports from the site's own pages are folded into per-(network class, replica)
 * aggregates that are sent to visitors only once they rest on k distinct reporters; nothing per visitor
 * is kept (the whole state is inspected); bad, oversized, cross-origin and too frequent
 * reports are refused with WEBPP_ERR_* codes.
 */
import { writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AGGREGATE_HEADER, CLIENT_REPORT_PATH, parseAggregateHeader } from '@webpp/core';
import { startReplicaServer, type ReplicaServer } from '../src/server.js';
import { ADMIN_TOKEN, auth, freePort, removeTempDirs, tempDir } from './helpers.js';

const B = 'http://b.localhost:8082';
const C = 'http://c.localhost:8083';
const servers: ReplicaServer[] = [];

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await removeTempDirs();
});

async function start(options: Record<string, unknown> = {}): Promise<{ server: ReplicaServer; url: string }> {
  const root = await tempDir();
  await writeFile(join(root, 'index.html'), '<!doctype html><title>t</title>');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = await startReplicaServer({
    root,
    port,
    adminToken: ADMIN_TOKEN,
    injectScript: false,
    directory: { formatVersion: 1, entries: [{ logical: '/img/*', servers: [B, C] }] },
    ...options,
  });
  servers.push(server);
  return { server, url };
}

function report(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}${CLIENT_REPORT_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: url, 'sec-fetch-site': 'same-origin', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function aggregateOf(url: string): Promise<ReturnType<typeof parseAggregateHeader> & { raw: string | null }> {
  const response = await fetch(`${url}/index.html`);
  await response.arrayBuffer();
  const raw = response.headers.get(AGGREGATE_HEADER);
  return { ...parseAggregateHeader(raw), raw };
}

/** A request sent from the loopback address `from` (all of 127/8 is local), as another client would. */
function requestFrom(from: string, url: string, method: string, headers: Record<string, string> = {}, body?: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { method, headers, localAddress: from }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers }));
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

function reportFrom(from: string, url: string, rows: { server: string; responseMs: number }[]): Promise<{ status: number }> {
  return requestFrom(from, `${url}${CLIENT_REPORT_PATH}`, 'POST', { 'content-type': 'application/json', origin: url }, JSON.stringify({ rows }));
}

async function rowsSeenFrom(from: string, url: string): Promise<ReturnType<typeof parseAggregateHeader>['rows']> {
  const response = await requestFrom(from, `${url}/index.html`, 'GET');
  const raw = response.headers[AGGREGATE_HEADER];
  return parseAggregateHeader(typeof raw === 'string' ? raw : null).rows;
}

describe('the client aggregate', () => {
  it('is off by default: no header, no endpoint', async () => {
    const { url } = await start();
    expect((await aggregateOf(url)).raw).toBeNull();
    expect((await report(url, { rows: [{ server: B, responseMs: 10 }] })).status).toBe(404);
  });

  it('publishes a row only once it rests on k reports, and keeps nothing per visitor', async () => {
    const { server, url } = await start({ clientAggregate: true, clientAggregateMinReports: 3, clientReportIntervalMs: 60_000 });
    // On: the header tells workers to report, with no rows yet.
    expect(await aggregateOf(url)).toMatchObject({ reportIntervalMs: 60_000, rows: [] });
    // Each report from another client (another address of the same network class, 127.0/16).
    expect((await reportFrom('127.0.2.1', url, [{ server: B, responseMs: 200 }, { server: C, responseMs: 20 }])).status).toBe(204);
    expect((await reportFrom('127.0.2.2', url, [{ server: B, responseMs: 180 }, { server: C, responseMs: 25 }])).status).toBe(204);
    // Two reporters: below k = 3, nothing leaves.
    expect((await aggregateOf(url)).rows).toEqual([]);
    expect((await reportFrom('127.0.2.3', url, [{ server: B, responseMs: 220 }])).status).toBe(204);
    // Three for B: its row is sent (geometric mean of 200, 180, 220); C still has two.
    const { rows } = await aggregateOf(url);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.server).toBe(B);
    expect(rows[0]?.sampleCount).toBe(3);
    expect(rows[0]?.responseMs).toBeCloseTo(Math.cbrt(200 * 180 * 220), 0);
    // A server the site does not use is not kept.
    expect((await reportFrom('127.0.2.4', url, [{ server: 'http://elsewhere.example', responseMs: 1 }])).status).toBe(204);
    // The whole state: one network class (an opaque id, not the address), one cell per replica,
    // a handful of numbers each, however many reports came in.
    const dump = server.app.webpp.clientAggregate?.dump() ?? [];
    expect(dump).toHaveLength(1);
    expect(dump[0]?.classId).toMatch(/^[0-9a-f]{16}$/);
    expect(dump[0]?.cells.map((cell) => cell.server).sort()).toEqual([B, C]);
    const text = JSON.stringify(dump);
    expect(text).not.toContain('127.0');
    expect(text).not.toContain('elsewhere');
    for (const cell of dump[0]?.cells ?? []) expect(Object.keys(cell).sort()).toEqual(['current', 'currentNew', 'logSum', 'previous', 'server', 'updatedAtMs', 'weight', 'window']);
    // Statistics and metrics show counts only.
    const stats = (await (await fetch(`${url}/.well-known/webpp/stats`, { headers: auth })).json()) as { origin: { clientAggregate: Record<string, number> } };
    expect(stats.origin.clientAggregate).toMatchObject({ classes: 1, cells: 2, publishedCells: 1, reportsAccepted: 4, rowsIgnored: 1 });
    const metrics = await (await fetch(`${url}/.well-known/webpp/metrics`, { headers: auth })).text();
    expect(metrics).toMatch(/^webpp_client_reports_total\{result="accepted"\} 4$/m);
  });

  it('refuses bad, oversized and cross-origin reports with WEBPP_ERR codes', async () => {
    const { server, url } = await start({ clientAggregate: true, clientAggregateMinReports: 3 });
    const codeOf = async (response: Response): Promise<[number, string]> => [response.status, ((await response.json()) as { code: string }).code];
    expect(await codeOf(await report(url, '{not json'))).toEqual([400, 'WEBPP_ERR_BAD_BODY']);
    expect(await codeOf(await report(url, { rows: [{ server: B, responseMs: 'fast' }] }))).toEqual([400, 'WEBPP_ERR_BAD_BODY']);
    expect(await codeOf(await report(url, { rows: [{ server: B, responseMs: -1 }] }))).toEqual([400, 'WEBPP_ERR_BAD_BODY']);
    expect(await codeOf(await report(url, { rows: [], visitor: 'me' }))).toEqual([400, 'WEBPP_ERR_BAD_BODY']);
    expect(await codeOf(await report(url, { rows: Array.from({ length: 33 }, () => ({ server: B, responseMs: 1 })) }))).toEqual([400, 'WEBPP_ERR_BAD_BODY']);
    expect(await codeOf(await report(url, JSON.stringify({ rows: [{ server: `${B}/${'x'.repeat(5000)}`, responseMs: 1 }] })))).toEqual([400, 'WEBPP_ERR_BAD_BODY']);
    expect(await codeOf(await report(url, 'rows', { 'content-type': 'text/plain' }))).toEqual([400, 'WEBPP_ERR_BAD_BODY']);
    expect(await codeOf(await report(url, { rows: [] }, { origin: 'http://evil.localhost' }))).toEqual([403, 'WEBPP_ERR_FORBIDDEN']);
    expect(await codeOf(await report(url, { rows: [] }, { 'sec-fetch-site': 'cross-site' }))).toEqual([403, 'WEBPP_ERR_FORBIDDEN']);
    const noOrigin = await fetch(`${url}${CLIENT_REPORT_PATH}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"rows":[]}' });
    expect(noOrigin.status).toBe(403);
    // None of them left anything behind.
    expect(server.app.webpp.clientAggregate?.dump()).toEqual([]);
  });

  it('rate-limits reports per network class', async () => {
    const { url } = await start({ clientAggregate: true, clientReportsPerMinute: 3 });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await report(url, { rows: [{ server: B, responseMs: 10 }] })).status);
    expect(statuses).toEqual([204, 204, 204, 429]);
    const refused = await report(url, { rows: [{ server: B, responseMs: 10 }] });
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(((await refused.json()) as { code: string }).code).toBe('WEBPP_ERR_RATE_LIMITED');
  });

  it('counts distinct reporters: one client alone never publishes, however many reports it sends (issue 25 §1)', async () => {
    const { server, url } = await start({ clientAggregate: true }); // k = 20, 120 reports a minute per class
    // The reproduction: 20 reports from one address, C said fast, B said very slow.
    for (let i = 0; i < 20; i += 1) {
      expect((await reportFrom('127.0.0.1', url, [{ server: C, responseMs: 1 }, { server: B, responseMs: 9000 }])).status).toBe(204);
    }
    // A new visitor of the same network class (127.0/16) gets no rows: they rest on one reporter.
    expect(await rowsSeenFrom('127.0.9.9', url)).toEqual([]);
    expect(server.app.webpp.clientAggregate?.gauges(Date.now())).toMatchObject({ reportsAccepted: 1, reportsRepeated: 19, publishedCells: 0 });
  });

  it('publishes once k distinct clients reported, says n of them, and caps one reporter\'s weight (issue 25 §1)', async () => {
    const { url } = await start({ clientAggregate: true, clientAggregateMinReports: 5 });
    for (let i = 1; i <= 4; i += 1) expect((await reportFrom(`127.0.1.${i}`, url, [{ server: B, responseMs: 100 }])).status).toBe(204);
    expect(await rowsSeenFrom('127.0.9.9', url)).toEqual([]);
    expect((await reportFrom('127.0.1.5', url, [{ server: B, responseMs: 100 }])).status).toBe(204);
    const rows = await rowsSeenFrom('127.0.9.9', url);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ server: B, sampleCount: 5 });
    expect(rows[0]?.responseMs).toBeCloseTo(100, 0);
    // One of them, reporting again and again that B is slow, moves nothing.
    for (let i = 0; i < 30; i += 1) await reportFrom('127.0.1.1', url, [{ server: B, responseMs: 60_000 }]);
    const after = await rowsSeenFrom('127.0.9.9', url);
    expect(after[0]).toMatchObject({ server: B, sampleCount: 5 });
    expect(after[0]?.responseMs).toBeCloseTo(100, 0);
  });
});
