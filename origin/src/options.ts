/**
 * Options of the webppOrigin plugin: types, JSON schema, defaults. Every option is
 * documented in docs/origin.md ("Plugin options").
 */
import { Ajv } from 'ajv';
import type { FastifyRequest } from 'fastify';
import { WEBPP_ERR_BAD_OPTIONS } from './errors.js';
import { canonicalUrl } from '@webpp/core';
import type { DirectoryFile } from './directory/directory-file.js';
import type { BatchOptions } from './batch/batch-options.js';

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

export type CorsMode = 'replicated' | 'all' | 'off';

export interface WebppOriginOptions {
  /** This server's public origin, as browsers and peers reach it: "https://b.example.org". Required. */
  publicUrl: string;
  /** Origin that logical paths (management API, directory file) are resolved against. Default: publicUrl. */
  logicalOrigin?: string;
  /** Folder for the persisted directory and stored replicas. Default: a temporary folder removed on close. */
  dataDir?: string;
  /** Directory seed file (JSON, see docs/origin.md); applied when no persisted directory exists yet. */
  directoryFile?: string;
  /** Directory seed given inline, same format as the file. */
  directory?: DirectoryFile;
  /** Public URLs of the other servers of this administrative domain. */
  peers?: string[];
  /**
   * Other origins at which peers reach this server (an internal address, a port forward).
   * Signed server-to-server calls are accepted when addressed to publicUrl or to one of
   * these. Default: none.
   */
  aliasUrls?: string[];
  /** Bearer token for the management API. Without it, management is disabled. */
  adminToken?: string;
  /** Shared secret for server-to-server calls. Required when `peers` is not empty. */
  clusterSecret?: string;
  /** Anti-entropy period. Default 10 000 ms. */
  syncIntervalMs?: number;
  /** Timeout of every server-to-server request. Default 5 000 ms. */
  peerTimeoutMs?: number;
  /** Accepted clock difference for signed server-to-server requests. Default 300 000 ms. */
  maxClockSkewMs?: number;
  /** Insert `<script src="/webpp.js">` into HTML pages that lack it. Default true. */
  injectScript?: boolean;
  /** Serve the page script and the Service Worker. Default true. */
  serveClientScripts?: boolean;
  /** Path of the page script. Default "/webpp.js". */
  scriptPath?: string;
  /** Path of the Service Worker script. Default "/webpp-sw.js". */
  workerPath?: string;
  /** Folder holding webpp.js and webpp-sw.js. Default: the @webpp/sw package's bundle/ folder. */
  clientBundleDir?: string;
  /** CORS on GET/HEAD responses: only resources in the directory (default), every response, or none. */
  cors?: CorsMode;
  /** Send `webpp-control: off` on every response: the worker unregisters itself. Default false. */
  killSwitch?: boolean;
  /** Byte budget of the bindings header. Default 8192. */
  maxBindingsHeaderBytes?: number;
  /**
   * Folder the site's static files are served from (startReplicaServer passes its `root`):
   * their SHA-256 digests go into the bindings header so the worker can check replicas' bytes.
   */
  contentRoot?: string;
  /**
   * Send SHA-256 content digests in the bindings header (docs/protocol.md). Default false:
   * opt-in while the worker's body checks are known to disturb its latency samples
   * (docs/service-worker.md, "Integrity").
   */
  contentDigests?: boolean;
  /** Byte bound of the pre-processing cache. Default 32 MiB. */
  preprocessCacheBytes?: number;
  /** Largest HTML or CSS body that is parsed for references; bigger ones get only their own binding. Default 8 MiB. */
  maxPreprocessBytes?: number;
  /** Largest replica accepted by POST or PUT; bigger bodies get 413. Default 50 MiB. */
  maxReplicaBytes?: number;
  /** Serve the statistics without the admin token. Default false. */
  publicStats?: boolean;
  /** Weight of the newest sample in the service-time EWMA. Default 0.1. */
  statsEwmaWeight?: number;
  /** Half-life of the request-rate estimators. Default 60 000 ms. */
  statsRateHalfLifeMs?: number;
  /** Resources tracked individually by the statistics. Default 10 000. */
  statsMaxResources?: number;
  /** Run before each replica operation; any may veto (paper Section 5.2). */
  preFilters?: PreFilter[];
  /** Run after each successful replica operation. */
  postFilters?: PostFilter[];
  /** Batch transmission of embedded resources (docs/batching.md): true, false (default), or options. */
  batch?: BatchOptions | boolean;
}

export interface ResolvedOptions {
  publicUrl: string;
  logicalOrigin: string;
  dataDir: string | undefined;
  directoryFile: string | undefined;
  directory: DirectoryFile | undefined;
  peers: string[];
  aliasUrls: string[];
  adminToken: string | undefined;
  clusterSecret: string | undefined;
  syncIntervalMs: number;
  peerTimeoutMs: number;
  maxClockSkewMs: number;
  injectScript: boolean;
  serveClientScripts: boolean;
  scriptPath: string;
  workerPath: string;
  clientBundleDir: string | undefined;
  cors: CorsMode;
  killSwitch: boolean;
  maxBindingsHeaderBytes: number;
  contentRoot: string | undefined;
  contentDigests: boolean;
  preprocessCacheBytes: number;
  maxPreprocessBytes: number;
  maxReplicaBytes: number;
  publicStats: boolean;
  statsEwmaWeight: number;
  statsRateHalfLifeMs: number;
  statsMaxResources: number;
  preFilters: PreFilter[];
  postFilters: PostFilter[];
  batch: BatchOptions | boolean;
}

const origin = { type: 'string', minLength: 1, maxLength: 2048 } as const;
const rootPath = { type: 'string', pattern: '^/[^?#\\s]*$', maxLength: 1024 } as const;

/** JSON schema of the serialisable options (filters are checked separately: functions are not JSON). */
export const optionsSchema = {
  type: 'object',
  required: ['publicUrl'],
  additionalProperties: false,
  properties: {
    publicUrl: origin,
    logicalOrigin: origin,
    dataDir: { type: 'string', minLength: 1 },
    directoryFile: { type: 'string', minLength: 1 },
    directory: { type: 'object' },
    peers: { type: 'array', items: origin, maxItems: 256 },
    aliasUrls: { type: 'array', items: origin, maxItems: 16 },
    adminToken: { type: 'string', minLength: 16, maxLength: 4096, pattern: '^[\\x21-\\x7e]+$' },
    clusterSecret: { type: 'string', minLength: 16, maxLength: 4096 },
    syncIntervalMs: { type: 'integer', minimum: 10, maximum: 86_400_000 },
    peerTimeoutMs: { type: 'integer', minimum: 10, maximum: 600_000 },
    maxClockSkewMs: { type: 'integer', minimum: 1000, maximum: 86_400_000 },
    injectScript: { type: 'boolean' },
    serveClientScripts: { type: 'boolean' },
    scriptPath: rootPath,
    workerPath: rootPath,
    clientBundleDir: { type: 'string', minLength: 1 },
    cors: { enum: ['replicated', 'all', 'off'] },
    killSwitch: { type: 'boolean' },
    maxBindingsHeaderBytes: { type: 'integer', minimum: 64, maximum: 1_048_576 },
    contentRoot: { type: 'string', minLength: 1 },
    contentDigests: { type: 'boolean' },
    preprocessCacheBytes: { type: 'integer', minimum: 0 },
    maxPreprocessBytes: { type: 'integer', minimum: 0 },
    maxReplicaBytes: { type: 'integer', minimum: 1 },
    publicStats: { type: 'boolean' },
    statsEwmaWeight: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
    statsRateHalfLifeMs: { type: 'integer', minimum: 1 },
    statsMaxResources: { type: 'integer', minimum: 1 },
    preFilters: { type: 'array' },
    postFilters: { type: 'array' },
    batch: { anyOf: [{ type: 'boolean' }, { type: 'object' }] }, // checked in detail by resolveBatchOptions
  },
} as const;

const validate = new Ajv({ allErrors: true }).compile(optionsSchema);

/** Validates options and fills in defaults; throws WEBPP_ERR_BAD_OPTIONS naming every problem. */
export function resolveOptions(options: WebppOriginOptions): ResolvedOptions {
  const input = Object.fromEntries(Object.entries(options ?? {}).filter(([, value]) => value !== undefined));
  if (!validate(input)) {
    const detail = (validate.errors ?? [])
      .map((error) => `${error.instancePath === '' ? 'options' : `options${error.instancePath.replace(/\//g, '.')}`} ${error.message ?? 'is invalid'}${error.keyword === 'additionalProperties' ? ` (${String((error.params as { additionalProperty?: string }).additionalProperty)})` : ''}`)
      .join('; ');
    throw new WEBPP_ERR_BAD_OPTIONS(detail);
  }
  const publicUrl = originOnly(options.publicUrl, 'publicUrl');
  const logicalOrigin = options.logicalOrigin === undefined ? publicUrl : originOnly(options.logicalOrigin, 'logicalOrigin');
  const peers = [...new Set((options.peers ?? []).map((peer, index) => originOnly(peer, `peers[${index}]`)))].filter(
    (peer) => peer !== publicUrl,
  );
  if (peers.length > 0 && options.clusterSecret === undefined) {
    throw new WEBPP_ERR_BAD_OPTIONS('options.clusterSecret is required when peers are configured');
  }
  for (const [name, list] of [['preFilters', options.preFilters], ['postFilters', options.postFilters]] as const) {
    if (list !== undefined && !list.every((filter) => typeof filter === 'function')) {
      throw new WEBPP_ERR_BAD_OPTIONS(`options.${name} must be an array of functions`);
    }
  }
  const scriptPath = options.scriptPath ?? '/webpp.js';
  const workerPath = options.workerPath ?? '/webpp-sw.js';
  if (scriptPath === workerPath) throw new WEBPP_ERR_BAD_OPTIONS('options.scriptPath and options.workerPath must differ');
  return {
    publicUrl,
    logicalOrigin,
    dataDir: options.dataDir,
    directoryFile: options.directoryFile,
    directory: options.directory,
    peers,
    aliasUrls: (options.aliasUrls ?? []).map((alias, index) => originOnly(alias, `aliasUrls[${index}]`)),
    adminToken: options.adminToken,
    clusterSecret: options.clusterSecret,
    syncIntervalMs: options.syncIntervalMs ?? 10_000,
    peerTimeoutMs: options.peerTimeoutMs ?? 5_000,
    maxClockSkewMs: options.maxClockSkewMs ?? 300_000,
    injectScript: options.injectScript ?? true,
    serveClientScripts: options.serveClientScripts ?? true,
    scriptPath,
    workerPath,
    clientBundleDir: options.clientBundleDir,
    cors: options.cors ?? 'replicated',
    killSwitch: options.killSwitch ?? false,
    maxBindingsHeaderBytes: options.maxBindingsHeaderBytes ?? 8192,
    contentRoot: options.contentRoot,
    contentDigests: options.contentDigests ?? false,
    preprocessCacheBytes: options.preprocessCacheBytes ?? 32 * 1024 * 1024,
    maxPreprocessBytes: options.maxPreprocessBytes ?? 8 * 1024 * 1024,
    maxReplicaBytes: options.maxReplicaBytes ?? 50 * 1024 * 1024,
    publicStats: options.publicStats ?? false,
    statsEwmaWeight: options.statsEwmaWeight ?? 0.1,
    statsRateHalfLifeMs: options.statsRateHalfLifeMs ?? 60_000,
    statsMaxResources: options.statsMaxResources ?? 10_000,
    preFilters: options.preFilters ?? [],
    postFilters: options.postFilters ?? [],
    batch: options.batch ?? false,
  };
}

/** "scheme://host[:port]" of an http(s) URL that has no path, query or credentials. */
function originOnly(value: string, name: string): string {
  const url = canonicalUrl(value);
  if (url === undefined) throw new WEBPP_ERR_BAD_OPTIONS(`options.${name} must be an http(s) URL (got ${JSON.stringify(value)})`);
  const parsed = new URL(url);
  if (parsed.pathname !== '/' || parsed.search !== '') {
    throw new WEBPP_ERR_BAD_OPTIONS(`options.${name} must be an origin without path or query (got ${JSON.stringify(value)})`);
  }
  return parsed.origin;
}
