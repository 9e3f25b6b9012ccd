/**
 * The write loop of the durability run: management POST (create), PUT (update everywhere)
 * and DELETE (remove) over the three servers, several in flight at once, with a seeded
 * PRNG choosing the server, the operation and the path among a few paths (so operations
 * on one logical URL collide across servers). Every answer is recorded with the client's
 * send and answer times: 2xx (acknowledged, with version, ETag and push outcomes), other
 * statuses, and network errors (server killed mid-request). Bounded in count and time.
 */
import { createHash } from 'node:crypto';
import { adminHeaders, type DurabilityCluster, type ServerNode } from './cluster.js';

export type WriteMethod = 'POST' | 'PUT' | 'DELETE';

interface PushRecord {
  /** Target server name. */
  server: string;
  status: number;
  ok: boolean;
}

export interface WriteRecord {
  id: number;
  method: WriteMethod;
  /** Name of the server the call was sent to. */
  server: string;
  path: string;
  /** SHA-256 (hex) of the body of a POST or PUT. */
  digest?: string;
  sentAtMs: number;
  /** When the answer (or the network error) arrived. */
  endAtMs: number;
  /** HTTP status; 0 for a network error. */
  status: number;
  /** WEBPP_ERR_* code of an error answer, or the network error message. */
  error?: string;
  /** Of an acknowledged POST or PUT: "<timeMs>@<writer>". */
  version?: string;
  etag?: string;
  /** Of an acknowledged PUT: whether the receiving server stored it, and its pushes. */
  stored?: boolean;
  pushes?: PushRecord[];
}

export interface WorkloadOptions {
  cluster: DurabilityCluster;
  random: () => number;
  paths: string[];
  maxWrites: number;
  concurrency: number;
  /** Absolute time (Date.now) after which no write is sent. */
  deadlineMs: number;
  /** Stops the loop early (checked before each write). */
  shouldStop: () => boolean;
  requestTimeoutMs?: number;
  /** Every answered write is appended here as soon as its answer arrives. */
  records: WriteRecord[];
}

const METHOD_WEIGHTS: [WriteMethod, number][] = [
  ['POST', 0.4],
  ['PUT', 0.35],
  ['DELETE', 0.25],
];

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

function pickMethod(random: () => number): WriteMethod {
  let roll = random();
  for (const [method, weight] of METHOD_WEIGHTS) {
    if (roll < weight) return method;
    roll -= weight;
  }
  return 'DELETE';
}

/** A unique body: the write's id and target, padded to a size drawn from the PRNG (mostly small, some 16–128 KiB). */
function bodyFor(id: number, method: WriteMethod, server: string, path: string, random: () => number): Buffer {
  const sizeBytes = random() < 0.8 ? Math.floor(random() * 1024) : 16 * 1024 + Math.floor(random() * 112 * 1024);
  const head = `write ${id} ${method} on ${server} ${path}\n`;
  const fill = String.fromCharCode(97 + (id % 26)).repeat(Math.max(0, sizeBytes - head.length));
  return Buffer.from(head + fill);
}

function serverOfPhysical(cluster: DurabilityCluster, physicalUrl: string): string {
  const origin = new URL(physicalUrl).origin;
  return cluster.nodes.find((node) => node.url === origin)?.name ?? origin;
}

async function send(options: WorkloadOptions, id: number, node: ServerNode, method: WriteMethod, path: string): Promise<WriteRecord> {
  const { cluster, random } = options;
  const body = method === 'DELETE' ? undefined : bodyFor(id, method, node.name, path, random);
  const record: WriteRecord = { id, method, server: node.name, path, sentAtMs: Date.now(), endAtMs: 0, status: 0 };
  if (body !== undefined) record.digest = createHash('sha256').update(body).digest('hex');
  try {
    const response = await fetch(`${node.url}/.well-known/webpp/replicas${path}`, {
      method,
      headers: body === undefined ? adminHeaders : { ...adminHeaders, 'content-type': 'text/plain' },
      body,
      signal: AbortSignal.timeout(options.requestTimeoutMs ?? 15_000),
    });
    const text = await response.text();
    record.endAtMs = Date.now();
    record.status = response.status;
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // not JSON: keep the status only
    }
    if (response.status >= 300) {
      record.error = typeof json.code === 'string' ? json.code : text.slice(0, 200);
    } else if (method !== 'DELETE') {
      record.version = json.version as string;
      record.etag = json.etag as string;
      if (method === 'PUT') {
        record.stored = json.stored === true;
        const pushes = (json.pushes ?? []) as { physicalUrl: string; status: number; ok: boolean }[];
        record.pushes = pushes.map((push) => ({ server: serverOfPhysical(cluster, push.physicalUrl), status: push.status, ok: push.ok }));
      }
    }
  } catch (error) {
    record.endAtMs = Date.now();
    record.status = 0;
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    record.error = cause ?? (error as Error).message;
  }
  return record;
}

/** Runs the loop until maxWrites, the deadline or shouldStop(); resolves with every write sent. */
export async function runWrites(options: WorkloadOptions): Promise<WriteRecord[]> {
  const { cluster, random, paths } = options;
  const { records } = options;
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < options.maxWrites && Date.now() < options.deadlineMs && !options.shouldStop()) {
      // Writes go to servers that are up; a server being restarted answers 503 until ready.
      const candidates = cluster.nodes.filter((node) => node.up);
      if (candidates.length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        continue;
      }
      const id = next;
      next += 1;
      const node = pick(random, candidates);
      const method = pickMethod(random);
      const path = pick(random, paths);
      records.push(await send(options, id, node, method, path));
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, lane));
  return records.sort((a, b) => a.id - b.id);
}
