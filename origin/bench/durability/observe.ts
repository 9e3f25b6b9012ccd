/**
 * Reading the servers' state after the durability run, over HTTP as a client would:
 * - the directory listing of each server, and a bounded wait until all three agree;
 * - each server's stored replicas (management listing), each one fetched at its public
 *   path: it must be served, with bytes whose SHA-256 is the listed ETag, of the listed
 *   size and version. Anything else is a damaged store.
 */
import { createHash } from 'node:crypto';
import { adminHeaders, type DurabilityCluster, type ServerNode } from './cluster.js';
import type { FinalReplica, FinalState } from './invariants.js';

interface DirectoryListing {
  version: number;
  entries: { logical: string; physical: string[] }[];
}

async function json<T>(url: string, headers: Record<string, string> = {}): Promise<T> {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${(await response.text()).slice(0, 200)}`);
  return (await response.json()) as T;
}

function directoryOf(node: ServerNode): Promise<DirectoryListing> {
  return json<DirectoryListing>(`${node.url}/.well-known/webpp/directory`);
}

/**
 * Polls the three directory listings until they are identical (entries and version), at
 * most `timeoutMs`. Resolves with the time it took, or undefined if they never agreed.
 */
export async function waitForConvergence(cluster: DurabilityCluster, timeoutMs: number, intervalMs = 50): Promise<{ agreedAtMs: number; listing: DirectoryListing } | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() <= deadline) {
    try {
      const listings = await Promise.all(cluster.nodes.map(directoryOf));
      const texts = new Set(listings.map((listing) => JSON.stringify(listing)));
      if (texts.size === 1) return { agreedAtMs: Date.now(), listing: listings[0] as DirectoryListing };
    } catch {
      // a server that does not answer yet: keep polling
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  return undefined;
}

export interface StoreCheck {
  server: string;
  replicas: Map<string, FinalReplica>;
  /** Why this store counts as damaged (empty when it is sound). */
  problems: string[];
}

function digestOfEtag(etag: string | null | undefined): string | undefined {
  const match = /^"sha256-([A-Za-z0-9_-]{43})"$/.exec(etag ?? '');
  return match === null ? undefined : Buffer.from(match[1] as string, 'base64url').toString('hex');
}

/**
 * Lists a server's stored replicas and fetches each one, plus every path of the run (to see
 * what it serves). Each response must carry bytes whose SHA-256 is its ETag, of its
 * Content-Length. With `quiet` (nothing writes to the server meanwhile) the listing must
 * also agree with what is served; right after a restart, peers' pushes may land between
 * the listing and the fetches, so only each response is checked against itself.
 */
export async function checkStore(node: ServerNode, paths: string[], { quiet }: { quiet: boolean }): Promise<StoreCheck> {
  const problems: string[] = [];
  const replicas = new Map<string, FinalReplica>();
  const listing = await json<{ replicas: { path: string; version: string; etag: string; size: number }[] }>(
    `${node.url}/.well-known/webpp/replicas`,
    adminHeaders,
  );
  const listed = new Map(listing.replicas.map((replica) => [replica.path, replica]));
  for (const path of new Set([...paths, ...listed.keys()])) {
    const response = await fetch(`${node.url}${path}`, { signal: AbortSignal.timeout(10_000) });
    const body = Buffer.from(await response.arrayBuffer());
    const entry = listed.get(path);
    if (response.status === 404) {
      if (entry !== undefined && quiet) problems.push(`${path}: listed as stored, but answers 404`);
      continue;
    }
    const digest = createHash('sha256').update(body).digest('hex');
    const etag = response.headers.get('etag');
    const version = response.headers.get('webpp-replica-version');
    if (response.status !== 200 || version === null) problems.push(`${path}: answers ${response.status}${version === null ? ' without a replica version' : ''}`);
    else if (digestOfEtag(etag) !== digest) problems.push(`${path}: served bytes (sha256 ${digest.slice(0, 12)}…) do not match its ETag ${etag}`);
    else if (Number(response.headers.get('content-length')) !== body.byteLength) problems.push(`${path}: ${body.byteLength} bytes served, Content-Length ${response.headers.get('content-length')}`);
    else {
      replicas.set(path, { digest, version });
      if (quiet && (entry === undefined || entry.etag !== etag || entry.version !== version || entry.size !== body.byteLength)) {
        problems.push(`${path}: served ${version} ${etag}, listed ${entry === undefined ? 'nothing' : `${entry.version} ${entry.etag}`}`);
      }
    }
  }
  return { server: node.name, replicas, problems };
}

/** Final state of every server, for the invariants. */
export function finalStateOf(checks: StoreCheck[]): FinalState {
  return new Map(checks.map((check) => [check.server, check.replicas]));
}

/**
 * Pairs (server, path) where the converged directory and the server's store disagree:
 * listed without being stored, or stored without being listed.
 */
export function directoryStoreMismatches(cluster: DurabilityCluster, listing: DirectoryListing, final: FinalState, paths: string[]): string[] {
  const mismatches: string[] = [];
  for (const node of cluster.nodes) {
    for (const path of paths) {
      const entry = listing.entries.find((candidate) => candidate.logical === `${cluster.logicalOrigin}${path}`);
      const listed = entry?.physical.includes(`${node.url}${path}`) ?? false;
      const stored = final.get(node.name)?.has(path) ?? false;
      if (listed !== stored) mismatches.push(`${node.name} ${path}: ${listed ? 'listed but not stored' : 'stored but not listed'}`);
    }
  }
  return mismatches;
}
