/**
 * Versions of replicated content (paper Section 5.2: PUT updates every replica). A version
 * is a hybrid timestamp: (timeMs, writer), ordered by timeMs, then by writer (the public
 * URL of the server that accepted the write), so every pair of versions is ordered the
 * same way on every server. A new version is always greater than the one it replaces:
 * timeMs = max(now, previous.timeMs + 1), so clock skew can delay a write's visibility
 * but an older write can never overwrite a newer one.
 *
 * Wire form (header `webpp-replica-version`): "<timeMs>@<writer>".
 */

export const REPLICA_VERSION_HEADER = 'webpp-replica-version';

export interface ReplicaVersion {
  timeMs: number;
  writer: string;
}

export function compareVersions(a: ReplicaVersion, b: ReplicaVersion): number {
  if (a.timeMs !== b.timeMs) return a.timeMs < b.timeMs ? -1 : 1;
  return a.writer < b.writer ? -1 : a.writer > b.writer ? 1 : 0;
}

export function nextVersion(previous: ReplicaVersion | undefined, writer: string, nowMs: number): ReplicaVersion {
  return { timeMs: Math.max(Math.floor(nowMs), (previous?.timeMs ?? 0) + 1), writer };
}

export function formatVersion(version: ReplicaVersion): string {
  return `${version.timeMs}@${version.writer}`;
}

export function parseVersion(value: string | undefined): ReplicaVersion | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d{1,16})@(https?:\/\/[\x21-\x7e]{1,2000})$/.exec(value.trim());
  if (match === null) return undefined;
  const timeMs = Number(match[1]);
  if (!Number.isSafeInteger(timeMs)) return undefined;
  return { timeMs, writer: match[2] ?? '' };
}
