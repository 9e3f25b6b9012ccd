/**
 * Pre- and post-filters of replica operations (paper Section 5.2): the function-valued
 * options of the plugin, typed here because JSON Schema cannot describe functions.
 */
import type { FastifyRequest } from 'fastify';

/** One replica-management operation, as seen by pre- and post-filters (paper Section 5.2). */
export interface ReplicaOperation {
  operation: 'create' | 'update' | 'delete';
  /** Who asked: an administrator (management API), a peer (update pushed by another server) or code. */
  source: 'admin' | 'peer' | 'api';
  /** The logical URL operated on. */
  logicalUrl: string;
  /** Local path of this server's replica. */
  path: string;
  /** This server's physical URL for the resource. */
  physicalUrl: string;
  /** New content (create, update). */
  content?: Buffer;
  contentType?: string;
  /** The HTTP request, when the operation came over HTTP. */
  request?: FastifyRequest;
}

/** Returned by a pre-filter to veto an operation; nothing is changed and the client gets `statusCode` (default 403). */
export interface FilterVeto {
  veto: string;
  statusCode?: number;
}

/** Runs before an operation. Return a FilterVeto (or throw) to stop it. */
export type PreFilter = (operation: ReplicaOperation) => void | FilterVeto | undefined | Promise<void | FilterVeto | undefined>;

/** What an operation did, for post-filters. */
export interface ReplicaOutcome {
  /** Version of the content after the operation (create, update). */
  version?: string;
  /** Content digest (create, update): `"sha256-…"` entity tag. */
  etag?: string;
  /** Whether this server's stored copy changed. */
  stored: boolean;
  /** Update pushes to the other replicas (update only). */
  pushes?: PushOutcome[];
}

export interface PushOutcome {
  physicalUrl: string;
  /** HTTP status from the peer; 0 for network errors and timeouts. */
  status: number;
  ok: boolean;
  error?: string;
}

/** Runs after an operation succeeded. Errors are logged, never sent to the client. */
export type PostFilter = (operation: ReplicaOperation, outcome: ReplicaOutcome) => void | Promise<void>;
