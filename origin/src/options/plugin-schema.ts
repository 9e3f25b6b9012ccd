/**
 * The options of the webppOrigin plugin, each defined once: its JSON Schema, default and
 * description. The TypeScript types, the validation with defaults (options.ts), the flags
 * and `--help` of webpp-origin (cli-flags.ts) and the table in docs/origin.md
 * (`npm run docs:options`) are all derived from this object.
 */
import { Type } from 'typebox';
import type { DirectoryFile } from '../directory/directory-file.js';
import type { BatchOptions } from '../batch/batch-options.js';
import type { PostFilter, PreFilter } from './filters.js';
import { defaulted } from './resolved.js';
import { pushOptionProperties } from './push-schema.js';
import { peerStateOptionProperties } from './peer-state-schema.js';
import { replicationOptionProperties } from './replication-schema.js';
import { lazyReplicationOptionProperties } from './lazy-replication-schema.js';
import { cacheClusterOptions } from './cache-cluster-schema.js';
import { cacheOptionProperties } from './cache-schema.js';
import { clientAggregateOptionProperties } from './client-aggregate-schema.js';

const MiB = 1024 * 1024;
const originUrl = { type: 'string', minLength: 1, maxLength: 2048 } as const;
const rootPath = { pattern: '^/[^?#\\s]*$', patternText: 'a path starting with / without query, fragment or spaces', maxLength: 1024 } as const;

export const pluginOptionsSchema = Type.Object(
  {
    publicUrl: Type.String({
      ...originUrl,
      description: "This server's origin (`scheme://host[:port]`, no path) as browsers and peers reach it. Its physical URLs are `publicUrl + path`.",
      cli: { group: 'Network', arg: 'url', defaultText: 'http://<public host>:<port>' },
    }),
    logicalOrigin: Type.Optional(
      Type.String({
        ...originUrl,
        defaultText: "the directory file's `logicalOrigin`, else `publicUrl`",
        description:
          "Origin of logical URLs written as paths: in the management API and the directory file. In a cluster, every server needs the primary's origin (the logical URL of a resource is by default the primary copy's URL): put it in the shared directory file, or give it here. The server does not start when this and the directory's `logicalOrigin` differ.",
        cli: { group: 'Network', arg: 'url' },
      }),
    ),
    dataDir: Type.Optional(
      Type.String({
        minLength: 1,
        defaultText: 'a temporary folder, removed on close',
        description:
          'Where the directory (`directory.ywebpp`), the seed record and stored replicas (`replicas/`) live. Set it for anything that must survive a restart.',
        cli: { group: 'Replication', arg: 'dir', default: '.webpp-data' },
      }),
    ),
    directoryFile: Type.Optional(
      Type.String({
        minLength: 1,
        description: '[Directory file](#directory-file) (JSON) seeding the replication directory. Re-applied as a diff at every start: edits take effect when the server restarts.',
        cli: { group: 'Replication', flag: 'directory', arg: 'file' },
      }),
    ),
    directory: Type.Optional(
      Type.Unsafe<DirectoryFile>({ type: 'object', description: "The directory seed inline: an object in the directory file's format. For an app that builds its seed in code instead of keeping a file." }),
    ),
    peers: defaulted(
      Type.Array(Type.String(originUrl), {
        maxItems: 256,
        default: [],
        description:
          'Public URLs of the other servers of the administrative domain. The directory is pushed to them and synchronised with them. Its own URL is dropped from the list. List each peer by its own `publicUrl` (or one of its `aliasUrls`): signatures cover the origin a call is sent to.',
        cli: { group: 'Replication', flag: 'peer', arg: 'url' },
      }),
    ),
    aliasUrls: defaulted(
      Type.Array(Type.String(originUrl), {
        maxItems: 16,
        default: [],
        description:
          'Other origins at which peers reach this server (an internal address, a port forward). Signed server-to-server calls addressed to one of them are accepted as well as those addressed to `publicUrl`.',
        cli: { group: 'Replication', flag: 'alias-url', arg: 'url' },
      }),
    ),
    adminToken: Type.Optional(
      Type.String({
        minLength: 16,
        maxLength: 4096,
        pattern: '^[\\x21-\\x7e]+$',
        patternText: 'made of visible ASCII characters',
        description:
          'Bearer token of the management API and the statistics (at least 16 visible ASCII characters). Without it, management answers 403 `WEBPP_ERR_DISABLED`.',
        cli: { group: 'Credentials', arg: 'token', env: 'WEBPP_ADMIN_TOKEN' },
      }),
    ),
    clusterSecret: Type.Optional(
      Type.String({
        minLength: 16,
        maxLength: 4096,
        description: 'Shared secret signing server-to-server calls (at least 16 characters). Required when `peers` is set.',
        cli: { group: 'Credentials', arg: 'secret', env: 'WEBPP_CLUSTER_SECRET' },
      }),
    ),
    syncIntervalMs: defaulted(
      Type.Integer({
        minimum: 10,
        maximum: 86_400_000,
        default: 10_000,
        description: 'Anti-entropy period between peers; also the retry period of failed update pushes. Lower: a change whose push failed reaches a peer sooner, for more sync calls; higher: fewer calls.',
        cli: { group: 'Replication' },
      }),
    ),
    peerTimeoutMs: defaulted(
      Type.Integer({ minimum: 10, maximum: 600_000, default: 5_000, description: 'Timeout of every server-to-server request. Raise it for peers that are far away or slow to take large replicas; lower it so that a dead peer holds each call up less.', cli: { group: 'Replication' } }),
    ),
    maxClockSkewMs: defaulted(
      Type.Integer({
        minimum: 1000,
        maximum: 86_400_000,
        default: 300_000,
        description: 'Accepted age (either way) of a server-to-server signature. Lower: a captured signed call can be replayed for less long; raise it only when the servers\' clocks cannot be kept in step (NTP).',
        cli: { group: 'Replication' },
      }),
    ),
    injectScript: defaulted(
      Type.Boolean({
        default: true,
        description: 'Insert `<script src="/webpp.js" async></script>` into HTML pages that do not load it yet. Turn it off when the pages load the script themselves.',
        cli: { group: 'Behaviour', flag: 'inject' },
      }),
    ),
    serveClientScripts: defaulted(
      Type.Boolean({ default: true, description: 'Serve the page script and the worker. Turn it off when another server (a CDN, the app) serves them at the same paths.', cli: { group: 'Behaviour' } }),
    ),
    scriptPath: defaulted(
      Type.String({ ...rootPath, default: '/webpp.js', description: 'Path of the page script (and its `.map` beside it). Change it when the site already uses the path.', cli: { group: 'Behaviour', arg: 'path' } }),
    ),
    workerPath: defaulted(
      Type.String({
        ...rootPath,
        default: '/webpp-sw.js',
        description: 'Path of the Service Worker script (and its `.map` beside it); must differ from `scriptPath`. Change it when the site already uses the path (a worker controls only the paths under its own folder: keep it at the root).',
        cli: { group: 'Behaviour', arg: 'path' },
      }),
    ),
    clientBundleDir: Type.Optional(
      Type.String({
        minLength: 1,
        defaultText: "`$WEBPP_SW_BUNDLE_DIR`, else the `@webpp/sw` package's `bundle/`",
        description:
          'Folder holding `webpp.js` and `webpp-sw.js`. `@webpp/sw` is a dependency of `@webpp/origin`, so an npm install has it (checked by `npm run test:pack`).',
        cli: { group: 'Behaviour', arg: 'dir' },
      }),
    ),
    cors: defaulted(
      Type.Enum(['replicated', 'all', 'off'], {
        default: 'replicated',
        description: "CORS headers on GET/HEAD responses: `'replicated'` (resources in the directory), `'all'`, or `'off'`. `'all'` when other sites' workers fetch resources not in the directory; `'off'` when a proxy in front sets CORS itself (the worker needs it on every replica).",
        cli: { group: 'Behaviour', arg: 'mode' },
      }),
    ),
    killSwitch: defaulted(
      Type.Boolean({
        default: false,
        description: "Send `webpp-control: off` on every response: every browser's worker unregisters (see [Kill switch](#kill-switch)).",
        cli: { group: 'Behaviour' },
      }),
    ),
    maxBindingsHeaderBytes: defaulted(
      Type.Integer({
        minimum: 64,
        maximum: 1_048_576,
        default: 8192,
        description: 'Byte budget of the bindings header; the encoder drops bindings from the end to fit. Raise it when pages reference more replicated resources than fit (a proxy in front must accept the larger header); lower it for a proxy with a smaller header limit.',
        cli: { group: 'Limits and tuning' },
      }),
    ),
    contentRoot: Type.Optional(
      Type.String({
        minLength: 1,
        defaultText: '— (`startReplicaServer` passes its `root`)',
        description:
          "Folder the site's static files are served from: their SHA-256 digests go into the bindings header ([content digests](protocol.md#content-digests)). Set it to the `root` of your own `@fastify/static`.",
      }),
    ),
    contentDigests: defaulted(
      Type.Boolean({
        default: false,
        description:
          "Send SHA-256 digests of static files under `contentRoot` and of stored replicas, never of HTML, so the worker can check replicas' bytes ([integrity](service-worker.md#integrity)). Turn it on when replicas live on servers you do not fully control.",
        cli: { group: 'Behaviour' },
      }),
    ),
    preprocessCacheBytes: defaulted(
      Type.Integer({ minimum: 0, default: 32 * MiB, description: 'Byte bound of the pre-processing cache (`0` disables it). Raise it when the statistics show pre-processing misses on pages that were seen before (more distinct pages than fit).', cli: { group: 'Limits and tuning' } }),
    ),
    maxPreprocessBytes: defaulted(
      Type.Integer({
        minimum: 0,
        default: 8 * MiB,
        description: 'Largest HTML or CSS body parsed for references; bigger ones are passed through with only their own binding. Raise it for larger pages; each parse holds the body in memory.',
        cli: { group: 'Limits and tuning' },
      }),
    ),
    maxReplicaBytes: defaulted(
      Type.Integer({ minimum: 1, default: 50 * MiB, description: 'Largest body of `POST`/`PUT` of a replica; larger gets 413. Raise it to replicate larger files (a co-op also refuses automatic replicas above its own).', cli: { group: 'Limits and tuning' } }),
    ),
    publicStats: defaulted(
      Type.Boolean({
        default: false,
        description: 'Serve the statistics (`/.well-known/webpp/stats`, `/.well-known/webpp/metrics`) without the admin token, with CORS. For a public dashboard or a scraper without the token.',
        cli: { group: 'Behaviour' },
      }),
    ),
    statsRateHalfLifeMs: defaulted(
      Type.Integer({ minimum: 1, default: 60_000, description: 'Half-life of the request- and byte-rate estimators. Lower: the rates follow a change sooner and are noisier; higher: steadier, slower.', cli: { group: 'Limits and tuning' } }),
    ),
    statsMaxResources: defaulted(
      Type.Integer({
        minimum: 1,
        default: 10_000,
        description: 'Resources tracked individually by the statistics (the least recently requested is dropped). Raise it for sites with more resources whose figures matter; each tracked resource costs memory.',
        cli: { group: 'Limits and tuning' },
      }),
    ),
    preFilters: defaulted(
      Type.Array(Type.Unsafe<PreFilter>({}), { default: [], description: 'Functions run before each replica operation; any can veto ([filters](#pre-filters-and-post-filters)).' }),
    ),
    postFilters: defaulted(Type.Array(Type.Unsafe<PostFilter>({}), { default: [], description: 'Functions run after each successful replica operation.' })),
    batch: defaulted(
      Type.Union([Type.Boolean(), Type.Unsafe<BatchOptions>({ type: 'object' })], {
        default: false,
        description:
          'Batch transmission: answer a worker\'s page request with the page and its embedded resources in one streamed response. `true`, `false`, or [batch options](batching.md).',
        cli: { group: 'Behaviour' },
      }),
    ),
    ...pushOptionProperties,
    ...peerStateOptionProperties,
    ...replicationOptionProperties,
    ...lazyReplicationOptionProperties,
    ...cacheClusterOptions,
    ...cacheOptionProperties,
    ...clientAggregateOptionProperties,
  },
  { additionalProperties: false },
);
