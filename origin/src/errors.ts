/**
 * Error codes of @webpp/origin, in the style of Fastify's FST_ERR_* codes. Every error a
 * client or an operator can see carries one of these codes, so that scripts can tell
 * failures apart without parsing messages.
 */
import createError from '@fastify/error';

/** Plugin or CLI options failed schema validation. */
export const WEBPP_ERR_BAD_OPTIONS = createError<'WEBPP_ERR_BAD_OPTIONS', [string]>(
  'WEBPP_ERR_BAD_OPTIONS',
  'Invalid @webpp/origin options: %s',
  500,
  TypeError,
);

/** The replication directory seed file could not be read or does not follow the format. */
export const WEBPP_ERR_DIRECTORY_FILE = createError<'WEBPP_ERR_DIRECTORY_FILE', [string, string]>(
  'WEBPP_ERR_DIRECTORY_FILE',
  'Invalid replication directory file %s: %s',
  500,
);

/** The persisted directory state exists but is damaged (checksum or format). */
export const WEBPP_ERR_DIRECTORY_CORRUPT = createError<'WEBPP_ERR_DIRECTORY_CORRUPT', [string, string]>(
  'WEBPP_ERR_DIRECTORY_CORRUPT',
  'Persisted replication directory %s is damaged: %s',
  500,
);

/** Another running server uses the data folder (data-dir-lock.ts); start-up stops. */
export const WEBPP_ERR_DATA_DIR_IN_USE = createError<'WEBPP_ERR_DATA_DIR_IN_USE', [string, string]>(
  'WEBPP_ERR_DATA_DIR_IN_USE',
  'Data folder %s is in use by another webpp server (%s): give each server its own dataDir (--data-dir); if no server runs there, remove its webpp.lock',
  500,
);

/** A request needing credentials came without them (or with a malformed header). */
export const WEBPP_ERR_UNAUTHORIZED = createError<'WEBPP_ERR_UNAUTHORIZED', [string]>(
  'WEBPP_ERR_UNAUTHORIZED',
  'Authentication required: %s',
  401,
);

/** Credentials were present but wrong, expired or not allowed for this operation. */
export const WEBPP_ERR_FORBIDDEN = createError<'WEBPP_ERR_FORBIDDEN', [string]>(
  'WEBPP_ERR_FORBIDDEN',
  'Forbidden: %s',
  403,
);

/** Management or cluster endpoints were called on a server that has no token or secret configured. */
export const WEBPP_ERR_DISABLED = createError<'WEBPP_ERR_DISABLED', [string]>(
  'WEBPP_ERR_DISABLED',
  '%s',
  403,
);

/** A logical path that is not normalised, escapes the root or contains forbidden characters. */
export const WEBPP_ERR_BAD_PATH = createError<'WEBPP_ERR_BAD_PATH', [string, string]>(
  'WEBPP_ERR_BAD_PATH',
  'Invalid logical path %s: %s',
  400,
);

/** A URL parameter (name service, sync) is missing or not a valid URL. */
export const WEBPP_ERR_BAD_URL = createError<'WEBPP_ERR_BAD_URL', [string]>(
  'WEBPP_ERR_BAD_URL',
  'Invalid URL: %s',
  400,
);

/** POST on a logical URL this server already holds a replica of. */
export const WEBPP_ERR_REPLICA_EXISTS = createError<'WEBPP_ERR_REPLICA_EXISTS', [string]>(
  'WEBPP_ERR_REPLICA_EXISTS',
  'This server already holds a replica of %s; use PUT to update it',
  409,
);

/** PUT or DELETE on a logical URL with no replica. */
export const WEBPP_ERR_REPLICA_NOT_FOUND = createError<'WEBPP_ERR_REPLICA_NOT_FOUND', [string]>(
  'WEBPP_ERR_REPLICA_NOT_FOUND',
  'No replica of %s',
  404,
);

/** A peer pushed a replica version that is not newer than the one stored here. */
export const WEBPP_ERR_STALE_VERSION = createError<'WEBPP_ERR_STALE_VERSION', [string, string, string]>(
  'WEBPP_ERR_STALE_VERSION',
  'Version %s of %s is not newer than the stored version %s',
  409,
);

/** A peer pushed a replica to a server the directory does not list as a replica of that logical URL. */
export const WEBPP_ERR_NOT_A_REPLICA = createError<'WEBPP_ERR_NOT_A_REPLICA', [string, string]>(
  'WEBPP_ERR_NOT_A_REPLICA',
  'The directory here does not list %s as a replica of %s',
  409,
);

/** A user-supplied pre-filter vetoed a replica operation (paper Section 5.2). */
export const WEBPP_ERR_VETOED = createError<'WEBPP_ERR_VETOED', [string]>(
  'WEBPP_ERR_VETOED',
  'Operation vetoed by a pre-filter: %s',
  403,
);

/** A server-to-server message could not be decoded. */
export const WEBPP_ERR_BAD_SYNC_MESSAGE = createError<'WEBPP_ERR_BAD_SYNC_MESSAGE', [string]>(
  'WEBPP_ERR_BAD_SYNC_MESSAGE',
  'Malformed directory sync message: %s',
  400,
);

/** A request header (version, content type) is malformed. */
export const WEBPP_ERR_BAD_HEADER = createError<'WEBPP_ERR_BAD_HEADER', [string, string]>(
  'WEBPP_ERR_BAD_HEADER',
  'Invalid %s header: %s',
  400,
);

/** The @webpp/sw bundle (webpp.js, webpp-sw.js) has not been built. */
export const WEBPP_ERR_CLIENT_BUNDLE_MISSING = createError<'WEBPP_ERR_CLIENT_BUNDLE_MISSING', [string]>(
  'WEBPP_ERR_CLIENT_BUNDLE_MISSING',
  '%s',
  503,
);

/** DELETE of a resource this server serves only through a prefix (wildcard) entry. */
export const WEBPP_ERR_PREFIX_ENTRY = createError<'WEBPP_ERR_PREFIX_ENTRY', [string, string]>(
  'WEBPP_ERR_PREFIX_ENTRY',
  '%s is covered by the prefix entry %s; change the directory entry instead',
  409,
);

/** A stored replica's content cannot be read on this server (its blob is missing or unreadable). */
export const WEBPP_ERR_REPLICA_UNREADABLE = createError<'WEBPP_ERR_REPLICA_UNREADABLE', [string]>(
  'WEBPP_ERR_REPLICA_UNREADABLE',
  'The stored replica of %s cannot be read on this server; try another replica',
  500,
);

/** Proxy mode: the upstream server failed or did not answer (502, or its 503/504). */
export const WEBPP_ERR_UPSTREAM_FAILED = createError<'WEBPP_ERR_UPSTREAM_FAILED', [string]>(
  'WEBPP_ERR_UPSTREAM_FAILED',
  'The upstream server did not answer (%s); try another replica',
  502,
);

/** A management request body that does not follow the documented format. */
export const WEBPP_ERR_BAD_BODY = createError<'WEBPP_ERR_BAD_BODY', [string]>('WEBPP_ERR_BAD_BODY', 'Invalid request body: %s', 400);

/** A TLS certificate or key file could not be read, or they do not form a usable pair. */
export const WEBPP_ERR_TLS_CREDENTIALS = createError<'WEBPP_ERR_TLS_CREDENTIALS', [string]>(
  'WEBPP_ERR_TLS_CREDENTIALS',
  'Invalid TLS certificate or key: %s',
  500,
);

/**
 * A co-op could not fetch an automatic replica's content lazily from any holder (issue 14).
 * 502, not 404: a 404 would tell the worker its binding is stale; a 502 makes it fail over.
 */
export const WEBPP_ERR_LAZY_FETCH_FAILED = createError<'WEBPP_ERR_LAZY_FETCH_FAILED', [string]>(
  'WEBPP_ERR_LAZY_FETCH_FAILED',
  'No holder could give the content of %s to this replica yet; try another replica',
  502,
);

/** The memory cache holds nothing under this path (GET /.well-known/webpp/cache/<path>). */
export const WEBPP_ERR_NOT_CACHED = createError<'WEBPP_ERR_NOT_CACHED', [string]>('WEBPP_ERR_NOT_CACHED', 'Not in the memory cache: %s', 404);

/** More requests wait for a slot than `maxQueuedRequests` allows (the concurrency limit, `maxConcurrentRequests`). */
export const WEBPP_ERR_OVERLOADED = createError<'WEBPP_ERR_OVERLOADED', [number]>(
  'WEBPP_ERR_OVERLOADED',
  'Server busy: %d requests are already waiting; retry shortly',
  503,
);

/** A client sent more than a rate limit allows (e.g. `clientReportsPerMinute`). */
export const WEBPP_ERR_RATE_LIMITED = createError<'WEBPP_ERR_RATE_LIMITED', [string]>('WEBPP_ERR_RATE_LIMITED', 'Too many requests: %s; retry later', 429);

/** The server is listening but not ready yet (http/start-gate.ts answers it itself, with Retry-After). */
export const WEBPP_ERR_STARTING = createError<'WEBPP_ERR_STARTING', []>('WEBPP_ERR_STARTING', 'webpp-origin is starting; retry shortly', 503);
