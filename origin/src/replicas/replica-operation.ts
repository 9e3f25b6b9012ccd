/**
 * One replica operation as ReplicaManager (replica-manager.ts) hands it to the filters
 * (replica-filters.ts) and answers it: the operation record, the results of create and
 * update, and the newer of two versions.
 */
import type { FastifyRequest } from 'fastify';
import type { PushOutcome, ReplicaOperation } from '../options.js';
import type { StoredReplica } from './replica-store.js';
import { compareVersions, type ReplicaVersion } from './replica-version.js';

export interface OperationContext {
  source: ReplicaOperation['source'];
  request?: FastifyRequest;
}

export interface CreateResult {
  logicalUrl: string;
  physicalUrl: string;
  replica: StoredReplica;
}

export interface UpdateResult {
  logicalUrl: string;
  version: string;
  etag: string;
  stored: boolean;
  pushes: PushOutcome[];
}

/** The record of an operation on the replica at `urls.path`, as the filters get it. */
export function replicaOperation(
  kind: ReplicaOperation['operation'],
  urls: { path: string; logicalUrl: string; physicalUrl: string },
  context: OperationContext,
  content?: Buffer,
  contentType?: string,
): ReplicaOperation {
  const operation: ReplicaOperation = { operation: kind, source: context.source, logicalUrl: urls.logicalUrl, path: urls.path, physicalUrl: urls.physicalUrl };
  if (content !== undefined) operation.content = content;
  if (contentType !== undefined) operation.contentType = contentType;
  if (context.request !== undefined) operation.request = context.request;
  return operation;
}

/** The newer of two versions (either may be missing). */
export function newest(a: ReplicaVersion | undefined, b: ReplicaVersion | undefined): ReplicaVersion | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return compareVersions(a, b) >= 0 ? a : b;
}
