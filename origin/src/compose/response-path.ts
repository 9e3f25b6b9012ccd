/**
 * The response path of webppOrigin as one table: its steps in order, which hooks each adds and
 * when it is there at all. plugin.ts registers the default path's rows; an opt-in feature's
 * rows (`feature`) are registered by the feature's plugin, whether webppOrigin registers it for
 * its option (compose/features.ts) or the app does after webppOrigin. Either way each hook runs
 * at its row: the steps hand their hooks to compose/path-hooks.ts, which runs them in this
 * order whenever they were registered. `hookOrder()` lists the hooks in the order they run on
 * a request (every onRequest step in table order, then onSend, onResponse:
 * https://fastify.dev/docs/latest/Reference/Lifecycle/), and docs/origin.md's response-path
 * table is generated from it (`npm run docs:options`). A row with `when` is off unless its
 * option is set: then it is not registered and adds no hook (origin/test/response-path.test.ts
 * checks both).
 *
 * Each plugin gets its own slice of what the server is made of (compose/parts.ts), never the
 * whole resolved options.
 */
import type { FastifyInstance } from 'fastify';
import type { ResolvedOptions } from '../options.js';
import type { OriginParts } from './parts.js';
import { webppConcurrencyGate, webppConcurrencyGateRelease } from '../http/concurrency-gate.js';
import { webppPushHeaders } from '../push/push-headers-plugin.js';
import { webppCors } from '../http/cors-plugin.js';
import { webppInjectedEtag } from '../http/injected-etag.js';
import { webppStripRange } from '../http/strip-range.js';
import { webppStoredReplicas } from '../http/stored-replicas.js';
import { webppLazyReplicas } from '../http/lazy-replicas-plugin.js';
import { webppKillSwitch } from '../http/kill-switch.js';
import { webppBindingsHeader } from '../http/bindings-header-plugin.js';
import { webppRecordLoad } from '../http/record-load.js';
import { webppPeerState } from '../http/peer-state-plugin.js';

/** The request hooks, in the order Fastify runs them. */
const FASTIFY_HOOK_ORDER = ['onRequest', 'preParsing', 'preValidation', 'preHandler', 'preSerialization', 'onSend', 'onResponse', 'onRequestAbort'] as const;
type RequestHook = (typeof FASTIFY_HOOK_ORDER)[number];

export interface ResponseStep {
  /** The plugin's name (its fastify-plugin `name`). */
  plugin: string;
  /** Its file under origin/src/. */
  file: string;
  /** Present only when `test` holds; `option` says which setting, for the docs. */
  when?: { option: string; test: (options: ResolvedOptions) => boolean };
  /** The hooks it adds, each with what it does there. */
  hooks: Partial<Record<RequestHook, string>>;
  /** A step of the default path: webppOrigin registers it. */
  register?: (app: FastifyInstance, parts: OriginParts) => PromiseLike<unknown>;
  /** A step of an opt-in feature: the feature's plugin (its entry point of @webpp/origin) registers it, whether webppOrigin registers the feature for its option or the app does. */
  feature?: string;
}

/** Present only with a finite capacity; its onRequest hook is first and its release last. */
const withCapacity = { option: '`maxConcurrentRequests` > 0', test: (options: ResolvedOptions) => options.maxConcurrentRequests > 0 };

const RESPONSE_PATH: readonly ResponseStep[] = [
  {
    plugin: 'webpp-concurrency-gate',
    file: 'http/concurrency-gate.ts',
    when: withCapacity,
    hooks: { onRequest: 'first: at most `maxConcurrentRequests` in service, `maxQueuedRequests` waiting, then `503 WEBPP_ERR_OVERLOADED`' },
    register: (app, { push }) => app.register(webppConcurrencyGate, { gate: push.gate }),
  },
  {
    plugin: 'webpp-push-headers',
    file: 'push/push-headers-plugin.ts',
    when: { option: '`pushServiceTime` (on by default)', test: (options) => options.pushServiceTime },
    hooks: { onRequest: 'counts requests in flight', onSend: '`Server-Timing` and `webpp-load` (server push, Fei et al. Section 4)' },
    register: (app, { options, push }) =>
      app.register(webppPushHeaders, { push: push.push, peerLoads: push.peerLoads, peerLoadMaxAgeMs: options.peerLoadMaxAgeMs, utilisation: () => push.utilisation.current() }),
  },
  {
    plugin: 'webpp-cors',
    file: 'http/cors-plugin.ts',
    hooks: { onRequest: 'answers CORS preflights', onSend: 'adds the CORS headers to replicated responses (none with `cors: off`)' },
    register: (app, { options, resolutions, isOwnEndpoint }) => app.register(webppCors, { mode: options.cors, resolutions, isOwnEndpoint }),
  },
  {
    plugin: 'webpp-injected-etag',
    file: 'http/injected-etag.ts',
    hooks: { onRequest: 'strips the `-webpp` suffix from `If-None-Match` / `If-Range` and marks the request (none with `injectScript: false`)' },
    register: (app, { options }) => app.register(webppInjectedEtag, { injecting: options.injectScript }),
  },
  {
    plugin: 'webpp-strip-range',
    file: 'http/strip-range.ts',
    hooks: { onRequest: 'drops `Range` on page requests (none with `injectScript: false`)' },
    register: (app, { options }) => app.register(webppStripRange, { injecting: options.injectScript }),
  },
  {
    plugin: 'webpp-stored-replicas',
    file: 'http/stored-replicas.ts',
    hooks: { onRequest: 'answers stored replicas before any route (`@fastify/send`)' },
    register: (app, { store }) => app.register(webppStoredReplicas, { store }),
  },
  {
    plugin: 'webpp-memory-cache',
    file: 'cache/cache-plugin.ts',
    when: { option: '`memoryCacheBytes` > 0', test: (options) => options.memoryCacheBytes > 0 },
    hooks: {
      onRequest: 'answers [memory cache](#memory-cache) hits',
      onSend: "offers the route's answer to the cache before anything rewrites it",
      onResponse: 'settles a fill the response did not complete',
      onRequestAbort: 'the same for an aborted request',
    },
    feature: '@webpp/origin/memory-cache',
  },
  {
    plugin: 'webpp-lazy-replicas',
    file: 'http/lazy-replicas-plugin.ts',
    when: { option: '`clusterSecret` (a cluster: peers place automatic replicas here)', test: (options) => options.clusterSecret !== undefined },
    hooks: { onRequest: 'automatic replicas not stored yet: fetched from a holder ([lazy replication](#lazy-replication-on-the-co-op))' },
    register: (app, { lazyReplicas }) => app.register(webppLazyReplicas, { lazy: lazyReplicas }),
  },
  {
    plugin: 'webpp-kill-switch',
    file: 'http/kill-switch.ts',
    hooks: { onSend: '`webpp-control: off` while the kill switch is on' },
    register: (app, { killSwitch }) => app.register(webppKillSwitch, { killSwitch }),
  },
  {
    plugin: 'webpp-bindings-header',
    file: 'http/bindings-header-plugin.ts',
    hooks: { onSend: 'pre-processing: the bindings header, script injection and the suffixed ETag' },
    register: (app, { options, headers, resolutions, killSwitch, isOwnEndpoint }) =>
      app.register(webppBindingsHeader, { headers, resolutions, killSwitch, isOwnEndpoint, maxPreprocessBytes: options.maxPreprocessBytes }),
  },
  {
    plugin: 'webpp-batch',
    file: 'batch/batch-plugin.ts',
    when: { option: '`batch`', test: (options) => options.batch !== false },
    hooks: { onRequest: "answers a batch navigation's CORS preflight", onSend: 'batch transmission: the pre-processed page and its embedded resources in one response ([batching](batching.md))' },
    feature: '@webpp/origin/batch',
  },
  {
    plugin: 'webpp-record-load',
    file: 'http/record-load.ts',
    hooks: { onResponse: 'load statistics' },
    register: (app, { stats }) => app.register(webppRecordLoad, { stats }),
  },
  {
    plugin: 'webpp-peer-state',
    file: 'http/peer-state-plugin.ts',
    when: { option: '`peers` and `clusterSecret`', test: (options) => options.peers.length > 0 && options.clusterSecret !== undefined },
    hooks: { onSend: 'load records on peer calls' },
    register: (app, { gossip }) => app.register(webppPeerState, { state: gossip?.state }),
  },
  {
    plugin: 'webpp-client-aggregate',
    file: 'client-aggregate/client-aggregate-plugin.ts',
    when: { option: '`clientAggregate`', test: (options) => options.clientAggregate },
    hooks: { onSend: '`webpp-aggregate` on responses for content; the client-report endpoint ([client aggregate](#client-aggregate))' },
    feature: '@webpp/origin/client-aggregate',
  },
  {
    plugin: 'webpp-concurrency-gate-release',
    file: 'http/concurrency-gate.ts',
    when: withCapacity,
    hooks: { onSend: "last: gives the request's slot back before the body's transfer" },
    register: (app, { push }) => app.register(webppConcurrencyGateRelease, { gate: push.gate }),
  },
];

/** The row of each step, by plugin name: the order path-hooks.ts runs the steps' hooks in. */
export function rankInTable(plugin: string): number | undefined {
  const index = RESPONSE_PATH.findIndex((step) => step.plugin === plugin);
  return index === -1 ? undefined : index;
}

/** The steps present with these options, in the table's order. */
export function enabledSteps(options: ResolvedOptions, steps: readonly ResponseStep[] = RESPONSE_PATH): ResponseStep[] {
  return steps.filter((step) => step.when?.test(options) ?? true);
}

export interface HookRow {
  hook: RequestHook;
  step: ResponseStep;
  job: string;
}

/** The hooks of `steps` in the order Fastify runs them on one request. */
export function hookOrder(steps: readonly ResponseStep[] = RESPONSE_PATH): HookRow[] {
  return FASTIFY_HOOK_ORDER.flatMap((hook) => steps.flatMap((step) => (step.hooks[hook] === undefined ? [] : [{ hook, step, job: step.hooks[hook] }])));
}

/** docs/origin.md's response-path table: every hook in the order Fastify runs it. */
export function responsePathMarkdown(): string {
  const presence = (step: ResponseStep): string => (step.feature === undefined ? (step.when?.option ?? 'always') : `${step.when?.option ?? ''}, or the app registers \`${step.feature}\``);
  const rows = hookOrder().map(({ hook, step, job }, index) => `| ${index + 1} | ${hook} | \`${step.plugin}\` (\`${step.file}\`) | ${presence(step)} | ${job.replace(/\|/g, '\\|')} |`);
  return ['| # | hook | plugin (file) | present when | job |', '| --- | --- | --- | --- | --- |', ...rows].join('\n');
}
