/**
 * The response path is the table in compose/response-path.ts (issue 24): a real request for an
 * HTML page (served by @fastify/static) runs exactly the steps the table lists for the options
 * in force, in the order it lists them; an opt-in feature that is off adds none of its hooks,
 * and one that is on adds its own, at its row, whether webppOrigin registers it for its option
 * or the app registers it from its entry point after webppOrigin. The steps are observed by
 * wrapping ResponsePathHooks.add (compose/path-hooks.ts) before the plugin is registered: each
 * step's hook records its kind and step when it runs, then does what it did before. Fastify
 * itself gets one hook per kind (the runners), counted by wrapping the app's `addHook`.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { webppOrigin } from '../src/plugin.js';
import { resolveOptions, type WebppOriginOptions } from '../src/options.js';
import { enabledSteps, hookOrder } from '../src/compose/response-path.js';
import { ResponsePathHooks } from '../src/compose/path-hooks.js';
import { webppBatch } from '../src/features/batch.js';
import { webppMemoryCache } from '../src/features/memory-cache.js';
import { webppClientAggregate } from '../src/features/client-aggregate.js';
import { webppReplication } from '../src/features/replication.js';
import { ADMIN_TOKEN, CLUSTER_SECRET, ORIGIN_A, removeTempDirs, tempDir } from './helpers.js';

afterAll(removeTempDirs);

const REQUEST_HOOKS = new Set(['onRequest', 'preParsing', 'preValidation', 'preHandler', 'preSerialization', 'onSend', 'onResponse', 'onRequestAbort', 'onError', 'onTimeout']);

let ran: string[] = [];
// eslint-disable-next-line @typescript-eslint/unbound-method -- called with each ResponsePathHooks as `this`
const { add } = ResponsePathHooks.prototype;
beforeEach(() => {
  ran = [];
  ResponsePathHooks.prototype.add = function (this: ResponsePathHooks, plugin: string, kind: 'onSend', run: (...args: never[]) => Promise<unknown>) {
    const recorded = async (...args: never[]): Promise<unknown> => {
      ran.push(`${kind} ${plugin}`);
      return run(...args);
    };
    add.call(this, plugin, kind, recorded as never);
  } as typeof add;
});
afterEach(() => {
  ResponsePathHooks.prototype.add = add;
});

interface PageRun {
  /** The steps that ran on GET /index.html, in order (`kind plugin`). */
  steps: string[];
  /** The request hooks Fastify got on the app itself (the response path's runners). */
  fastifyHooks: string[];
  body: string;
  /** Whether load-driven replication's decider runs (app.webpp.replication). */
  replication: boolean;
}

/** GET /index.html through webppOrigin with `options`, then `features` registered by the app. */
async function runPage(options: Partial<WebppOriginOptions>, features: (app: FastifyInstance) => PromiseLike<unknown> = async () => undefined): Promise<PageRun> {
  const root = await tempDir();
  await writeFile(join(root, 'index.html'), '<!doctype html><html><head><title>page</title></head><body><img src="/a.png"></body></html>');
  const app = Fastify({ logger: false });
  const fastifyHooks: string[] = [];
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called with each plugin instance as `this`
  const addHook = app.addHook;
  Object.defineProperty(app, 'addHook', {
    value: function (this: FastifyInstance, kind: string, hook: never) {
      // Hooks on the app itself (fastify-plugin's); the endpoints' own children check credentials.
      if (this === app && REQUEST_HOOKS.has(kind)) fastifyHooks.push(kind);
      return addHook.call(this, kind as 'onRequest', hook);
    },
  });
  try {
    await app.register(webppOrigin, { publicUrl: ORIGIN_A, adminToken: ADMIN_TOKEN, ...options });
    await features(app);
    await app.register(fastifyStatic, { root });
    await app.ready();
    ran = [];
    const response = await app.inject({ method: 'GET', url: '/index.html' });
    expect(response.statusCode).toBe(200);
    expect(response.body).toMatch(/<script src="\/webpp\.js(\?[^"]*)?" async><\/script>/); // the page really went through the path
    return { steps: ran, fastifyHooks, body: response.body, replication: app.webpp.replication !== undefined };
  } finally {
    await app.close();
  }
}

/** What the table says runs on a completed response with these options. */
function tableFor(options: Partial<WebppOriginOptions>): string[] {
  const resolved = resolveOptions({ publicUrl: ORIGIN_A, adminToken: ADMIN_TOKEN, ...options });
  return hookOrder(enabledSteps(resolved))
    .filter(({ hook }) => hook !== 'onRequestAbort')
    .map(({ hook, step }) => `${hook} ${step.plugin}`);
}

describe('the response path', () => {
  it('with default options, an HTML page runs the table’s ten steps, in its order, through three Fastify hooks', async () => {
    const { steps, fastifyHooks } = await runPage({});
    expect(steps).toEqual(tableFor({}));
    expect(steps).toEqual([
      'onRequest webpp-push-headers',
      'onRequest webpp-cors',
      'onRequest webpp-injected-etag',
      'onRequest webpp-strip-range',
      'onRequest webpp-stored-replicas',
      'onSend webpp-push-headers',
      'onSend webpp-cors',
      'onSend webpp-kill-switch',
      'onSend webpp-bindings-header',
      'onResponse webpp-record-load',
    ]);
    expect(fastifyHooks).toEqual(['onRequest', 'onSend', 'onResponse']);
  });

  const features: Array<[string, Partial<WebppOriginOptions>, string[]]> = [
    ['the memory cache', { memoryCacheBytes: 1024 * 1024 }, ['webpp-memory-cache']],
    ['batch transmission', { batch: true }, ['webpp-batch']],
    ['the client aggregate', { clientAggregate: true }, ['webpp-client-aggregate']],
    ['a finite capacity', { maxConcurrentRequests: 8 }, ['webpp-concurrency-gate', 'webpp-concurrency-gate-release']],
    // A cluster: lazy copies of automatic replicas and peer load records (the peer's port is closed).
    ['a cluster', { peers: ['http://127.0.0.1:1'], clusterSecret: CLUSTER_SECRET }, ['webpp-lazy-replicas', 'webpp-peer-state']],
  ];

  it.each(features)('%s adds its own steps when on, and none when off', async (_name, on, plugins) => {
    const defaults = tableFor({});
    for (const plugin of plugins) expect(defaults.some((row) => row.endsWith(` ${plugin}`))).toBe(false);
    const { steps } = await runPage(on);
    expect(steps).toEqual(tableFor(on));
    // The feature's steps are the only ones added; the default path's run as before, in the same order.
    expect(new Set(steps.filter((row) => !defaults.includes(row)).map((row) => row.split(' ')[1]))).toEqual(new Set(plugins));
    expect(steps.filter((row) => defaults.includes(row))).toEqual(defaults);
  });

  const standalone: Array<[string, Partial<WebppOriginOptions>, (app: FastifyInstance) => PromiseLike<unknown>]> = [
    ['@webpp/origin/memory-cache', { memoryCacheBytes: 1024 * 1024 }, (app) => app.register(webppMemoryCache, { memoryCacheBytes: 1024 * 1024 })],
    ['@webpp/origin/batch', { batch: true }, (app) => app.register(webppBatch, {})],
    ['@webpp/origin/client-aggregate', { clientAggregate: true }, (app) => app.register(webppClientAggregate, {})],
  ];

  it.each(standalone)('%s registered by the app after webppOrigin runs its steps at their rows, as its option does', async (_entry, option, register) => {
    const { steps } = await runPage({}, register);
    expect(steps).toEqual(tableFor(option));
    expect(steps).not.toEqual(tableFor({}));
  });

  // Registered by the app after webppOrigin, from its entry point: each lands at its row, as if
  // webppOrigin had registered it for its option (the memory cache's fill before the bindings
  // header rewrites the page; batch after it), and in either order among themselves.
  it('features registered by the app after webppOrigin take their rows of the table', async () => {
    const all = { memoryCacheBytes: 1024 * 1024, batch: true, clientAggregate: true, maxConcurrentRequests: 8 } as const;
    const { steps, fastifyHooks, body } = await runPage({ maxConcurrentRequests: 8 }, async (app) => {
      await app.register(webppClientAggregate, {});
      await app.register(webppBatch, {});
      await app.register(webppMemoryCache, { memoryCacheBytes: 1024 * 1024 });
    });
    expect(steps).toEqual(tableFor(all));
    expect(steps.indexOf('onSend webpp-memory-cache')).toBeLessThan(steps.indexOf('onSend webpp-bindings-header'));
    expect(steps.filter((row) => row.startsWith('onSend ')).at(-1)).toBe('onSend webpp-concurrency-gate-release'); // still the last onSend
    // One runner per kind, whoever registered the steps (the memory cache adds onRequestAbort's).
    expect([...fastifyHooks].sort()).toEqual(['onRequest', 'onRequestAbort', 'onResponse', 'onSend']);
    // The worker is asked for the features' add-ons, as with the options.
    expect(body).toContain('<script src="/webpp.js?features=batch,aggregate" async></script>');
  });

  // Load-driven replication is a decider on a timer: on (by option or registered by the app)
  // it adds no step and no Fastify hook; off, it is not there at all. Lazy copies and peer
  // load records are the cluster's steps (the case above), whatever it decides.
  it('load-driven replication adds no step, on or off, and off it is not registered', async () => {
    const cluster = { peers: ['http://127.0.0.1:1'], clusterSecret: CLUSTER_SECRET };
    const off = await runPage(cluster);
    const on = await runPage({ ...cluster, autoReplicate: true });
    const registered = await runPage(cluster, (app) => app.register(webppReplication, {}));
    expect(off.steps).toEqual(tableFor(cluster));
    expect(on.steps).toEqual(off.steps);
    expect(registered.steps).toEqual(off.steps);
    expect(on.fastifyHooks).toEqual(off.fastifyHooks);
    expect(registered.fastifyHooks).toEqual(off.fastifyHooks);
    expect([off.replication, on.replication, registered.replication]).toEqual([false, true, true]);
  });

  it('a feature registered both by option and by the app is refused, naming it', async () => {
    await expect(runPage({ batch: true }, (app) => app.register(webppBatch, {}))).rejects.toThrow(/@webpp\/origin\/batch is registered twice/);
  });
});
