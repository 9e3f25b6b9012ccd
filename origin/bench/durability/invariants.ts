/**
 * What "durable" means for replica management under kill -9 (issue 10 §7), checked on the
 * final state, after every server has been restarted from its data folder.
 *
 * A replica R = (S, p) is server S's copy of path p. Its final state F(R) is what S serves
 * at p: absent (404), or bytes with a version `<timeMs>@<writer>` (ordered as in
 * src/replicas/replica-version.ts). Each write the client sent has an outcome:
 *   - acknowledged: a 2xx answer;
 *   - refused: a 4xx, or the start gate's 503 — by contract it changed nothing;
 *   - unknown: a network error (the server was killed) or another 5xx — it may or may not
 *     have taken effect, at any moment up to its answer.
 * A write is "not known to precede" another write w when its answer came after w was sent
 * (all times are this machine's clock, the one the servers' versions use).
 *
 * The writes that put content into R:
 *   - POST p on S (201 gives its version);
 *   - PUT p on S that answered `stored: true`;
 *   - PUT p on another server X whose answer lists a push to S with ok (200: S stored it;
 *     409: S already had that version or a newer one). A push that failed at the time
 *     (S was down) is not part of the acknowledgement: X retries it from memory, so it may
 *     or may not arrive (counted apart, `put_pushes_unconfirmed*`).
 *
 * Invariants (a violation of 1 or 2 is an acknowledged write lost):
 *  1. Present or superseded. For every acknowledged content write w into R, unless some
 *     DELETE p on S that was not refused is not known to precede w: F(R) is present, its
 *     version is >= w's, and if equal its bytes are w's bytes. (A version is only ever
 *     replaced by a greater one, so a greater version means a later write superseded w;
 *     concurrent writes acknowledged by different servers race and the greatest version
 *     wins everywhere it is pushed.)
 *  2. Deletes stick. For every acknowledged DELETE d of p on S: F(R) is absent, unless a
 *     POST p on S that was not refused is not known to precede d (a later create).
 *  3. No phantom content. A present F(R) holds the bytes of a POST p or of a PUT p (sent
 *     anywhere: a POST converges like a PUT, issue 25 §10) that was not refused; its version's writer is the server that write
 *     was sent to, and if that write was acknowledged, F(R)'s version is the acknowledged one.
 * The same invariants 1 and 2 are also checked on a killed server right after its restart,
 * before it takes writes again, against the writes answered until then: a write lost by
 * the crash and then overwritten by later writes would pass the final check (it is
 * superseded by then) but not this one.
 * Stores and directories are checked elsewhere (observe.ts): every server restarts, every
 * replica it lists is served with bytes whose SHA-256 is its ETag, and the three directory
 * listings (and versions) are identical.
 */
import { compareVersions, parseVersion } from '../../src/replicas/replica-version.js';
import type { WriteRecord } from './workload.js';

/** What one server serves at one path after the run. */
export interface FinalReplica {
  digest: string;
  version: string;
}

/** server name -> path -> final replica (a path not in the map is absent). */
export type FinalState = Map<string, Map<string, FinalReplica>>;

export interface Violation {
  invariant: 'present-or-superseded' | 'deletes-stick' | 'no-phantom';
  /** 'final': after the run and a clean restart; 'restart': right after a kill -9 and restart of `server`. */
  phase: 'final' | 'restart';
  server: string;
  path: string;
  writeId?: number;
  detail: string;
}

export interface InvariantReport {
  violations: Violation[];
  /** Acknowledged writes that broke invariant 1 or 2 (each write counted once). */
  lostWriteIds: number[];
  /** Pushes that failed when their PUT was acknowledged. */
  unconfirmedPushes: number;
  /** …of which the target never got that version (or a newer one), and did not delete the replica later. */
  unconfirmedPushesNeverApplied: number;
}

type Outcome = 'acknowledged' | 'refused' | 'unknown';

export function outcomeOf(write: WriteRecord): Outcome {
  if (write.status >= 200 && write.status < 300) return 'acknowledged';
  if ((write.status >= 400 && write.status < 500) || (write.status === 503 && write.error === 'WEBPP_ERR_STARTING')) return 'refused';
  return 'unknown';
}

function versionAtLeast(final: FinalReplica | undefined, version: string): boolean {
  const have = parseVersion(final?.version);
  const want = parseVersion(version);
  return have !== undefined && want !== undefined && compareVersions(have, want) >= 0;
}

/**
 * Checks the invariants on `final`. With `onlyServer`, only the replicas of that server are
 * checked, and only invariants 1 and 2 (the restart check: `final` holds that server alone,
 * and writes still in flight are not in `writes`).
 */
export function checkInvariants(writes: WriteRecord[], final: FinalState, serverUrls: Map<string, string>, onlyServer?: string): InvariantReport {
  const phase = onlyServer === undefined ? 'final' : 'restart';
  const concerned = (server: string): boolean => onlyServer === undefined || server === onlyServer;
  const violations: Violation[] = [];
  const lost = new Set<number>();
  const possible = writes.filter((write) => outcomeOf(write) !== 'refused');
  const finalOf = (server: string, path: string): FinalReplica | undefined => final.get(server)?.get(path);
  const deletedAfter = (server: string, path: string, sentAtMs: number): boolean =>
    possible.some((d) => d.method === 'DELETE' && d.server === server && d.path === path && d.endAtMs > sentAtMs);
  const createdAfter = (server: string, path: string, sentAtMs: number): boolean =>
    possible.some((c) => c.method === 'POST' && c.server === server && c.path === path && c.endAtMs > sentAtMs);

  // Invariant 1, for each acknowledged content write and each replica it confirmed.
  let unconfirmedPushes = 0;
  let unconfirmedPushesNeverApplied = 0;
  for (const write of writes) {
    if (outcomeOf(write) !== 'acknowledged' || write.method === 'DELETE' || write.version === undefined) continue;
    const confirmed: string[] = [];
    if (write.method === 'POST' || write.stored === true) confirmed.push(write.server);
    for (const push of write.pushes ?? []) {
      if (push.ok) confirmed.push(push.server);
      else if (onlyServer === undefined) {
        unconfirmedPushes += 1;
        const applied = versionAtLeast(finalOf(push.server, write.path), write.version);
        if (!applied && !deletedAfter(push.server, write.path, write.sentAtMs)) unconfirmedPushesNeverApplied += 1;
      }
    }
    for (const server of confirmed.filter(concerned)) {
      if (deletedAfter(server, write.path, write.sentAtMs)) continue;
      const replica = finalOf(server, write.path);
      let detail: string | undefined;
      if (replica === undefined) detail = `acknowledged ${write.method} (version ${write.version}) is gone and no DELETE on ${server} came after it`;
      else if (!versionAtLeast(replica, write.version)) detail = `holds older version ${replica.version} than acknowledged ${write.version}`;
      else if (replica.version === write.version && replica.digest !== write.digest) detail = `version ${write.version} holds other bytes than were written`;
      if (detail !== undefined) {
        violations.push({ invariant: 'present-or-superseded', phase, server, path: write.path, writeId: write.id, detail });
        lost.add(write.id);
      }
    }
  }

  // Invariant 2: acknowledged deletes stick unless a create on the same server may have followed.
  for (const write of writes) {
    if (outcomeOf(write) !== 'acknowledged' || write.method !== 'DELETE' || !concerned(write.server)) continue;
    const replica = finalOf(write.server, write.path);
    if (replica === undefined || createdAfter(write.server, write.path, write.sentAtMs)) continue;
    violations.push({
      invariant: 'deletes-stick',
      phase,
      server: write.server,
      path: write.path,
      writeId: write.id,
      detail: `acknowledged DELETE, yet ${write.server} serves version ${replica.version} and no POST on ${write.server} came after it`,
    });
    lost.add(write.id);
  }

  // Invariant 3: every replica served holds bytes some write put there, with that write's version.
  for (const [server, replicas] of onlyServer === undefined ? final : new Map()) {
    for (const [path, replica] of replicas) {
      const source = possible.find(
        (w) => w.digest === replica.digest && w.path === path && w.method !== 'DELETE',
      );
      const writer = parseVersion(replica.version)?.writer;
      let detail: string | undefined;
      if (source === undefined) detail = `serves bytes (sha256 ${replica.digest.slice(0, 12)}…) that no write to ${path} sent`;
      else if (writer !== serverUrls.get(source.server)) detail = `version ${replica.version} names another writer than ${source.server}, where write ${source.id} was sent`;
      else if (source.version !== undefined && source.version !== replica.version) detail = `holds write ${source.id} under version ${replica.version}, acknowledged as ${source.version}`;
      if (detail !== undefined) violations.push({ invariant: 'no-phantom', phase, server, path, ...(source ? { writeId: source.id } : {}), detail });
    }
  }
  return { violations, lostWriteIds: [...lost].sort((a, b) => a - b), unconfirmedPushes, unconfirmedPushesNeverApplied };
}
