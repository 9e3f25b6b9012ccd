/**
 * The response path is the table in compose/response-path.ts (issue 24): a real request for an
 * HTML page (served by @fastify/static) runs exactly the hooks the table lists for the options
 * in force, in the order it lists them; an opt-in feature that is off adds none of its hooks,
 * and one that is on adds its own. The hooks are observed by wrapping `addHook` of the app
 * before the plugin is registered: each hook records its kind and the plugin that added it
 * when it runs, then does what it did before.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Fastify from 'fastify';
import fastifyStatic from '@fastify/static';
import { afterAll, describe, expect, it } from 'vitest';
import { webppOrigin } from '../src/plugin.js';
import { resolveOptions, type WebppOriginOptions } from '../src/options.js';
import { enabledSteps, hookOrder } from '../src/compose/response-path.js';
import { ADMIN_TOKEN, CLUSTER_SECRET, ORIGIN_A, removeTempDirs, tempDir } from './helpers.js';

afterAll(removeTempDirs);

const LIFECYCLE_HOOKS = new Set(['onReady', 'onClose', 'onRoute', 'onRegister', 'onListen', 'preClose']);

/** The hooks (`kind plugin`) that run on GET /index.html, in the order they ran. */
async function hooksRunOnPage(options: Partial<WebppOriginOptions>): Promise<string[]> {
  const root = await tempDir();
  await writeFile(join(root, 'index.html'), '<!doctype html><html><head><title>page</title></head><body><img src="/a.png"></body></html>');
  const app = Fastify({ logger: false });
  const ran: string[] = [];
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called with each plugin instance as `this`: each adds to its own context
  const addHook = app.addHook;
  // Every plugin instance inherits this property from the root instance (avvio's Object.create).
  Object.defineProperty(app, 'addHook', {
    value: function (this: typeof app & { pluginName: string }, kind: string, hook: (...args: unknown[]) => unknown) {
      if (LIFECYCLE_HOOKS.has(kind)) return addHook.call(this, kind as 'onReady', hook as () => Promise<void>);
      const label = `${kind} ${this.pluginName.split(' -> ').pop() ?? ''}`;
      const recorded = function (this: unknown, ...args: unknown[]): unknown {
        ran.push(label);
        return hook.apply(this, args);
      };
      return addHook.call(this, kind as 'onRequest', recorded as never);
    },
  });
  try {
    await app.register(webppOrigin, { publicUrl: ORIGIN_A, adminToken: ADMIN_TOKEN, ...options });
    await app.register(fastifyStatic, { root });
    await app.ready();
    const response = await app.inject({ method: 'GET', url: '/index.html' });
    expect(response.statusCode).toBe(200);
    expect(response.body).toMatch(/<script src="\/webpp\.js(\?[^"]*)?" async><\/script>/); // the page really went through the path
    return ran;
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
  it('with default options, an HTML page runs the table’s ten hooks, in its order', async () => {
    const ran = await hooksRunOnPage({});
    expect(ran).toEqual(tableFor({}));
    expect(ran).toEqual([
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
  });

  const features: Array<[string, Partial<WebppOriginOptions>, string[]]> = [
    ['the memory cache', { memoryCacheBytes: 1024 * 1024 }, ['webpp-memory-cache']],
    ['batch transmission', { batch: true }, ['webpp-batch']],
    ['the client aggregate', { clientAggregate: true }, ['webpp-client-aggregate']],
    ['a finite capacity', { maxConcurrentRequests: 8 }, ['webpp-concurrency-gate', 'webpp-concurrency-gate-release']],
    // A cluster: lazy copies of automatic replicas and peer load records (the peer's port is closed).
    ['a cluster', { peers: ['http://127.0.0.1:1'], clusterSecret: CLUSTER_SECRET }, ['webpp-lazy-replicas', 'webpp-peer-state']],
  ];

  it.each(features)('%s adds its own hooks when on, and none when off', async (_name, on, plugins) => {
    const defaults = tableFor({});
    for (const plugin of plugins) expect(defaults.some((row) => row.endsWith(` ${plugin}`))).toBe(false);
    const ran = await hooksRunOnPage(on);
    expect(ran).toEqual(tableFor(on));
    // The feature's hooks are the only ones added; the default path's run as before, in the same order.
    expect(new Set(ran.filter((row) => !defaults.includes(row)).map((row) => row.split(' ')[1]))).toEqual(new Set(plugins));
    expect(ran.filter((row) => defaults.includes(row))).toEqual(defaults);
  });
});
