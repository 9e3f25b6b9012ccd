/**
 * The engine both integration paths share, driven the way a fetch event drives it, against
 * real HTTP servers on loopback (Node's fetch stands in for the browser's).
 */
import { BINDINGS_HEADER, CONTROL_HEADER, FAST_PRESET, PAPER_DEFAULTS, encodeBindings } from '@webpp/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPolicy, registerPolicy } from '@webpp/core';
import { ReplicaClient } from '../src/replica-client.js';
import { withTableViews } from '../src/table-views.js';
import { CONTROL_KEY, memoryKeyValueStore } from '../src/storage.js';
import type { KeyValueStore } from '../src/storage.js';
import type { WebppEvent } from '../src/messages.js';
import { eventIO } from './support/event-io.js';
import { closeServers, startServer } from './support/servers.js';
import type { TestServer } from './support/servers.js';

interface Server extends TestServer {
  delayMs: number;
  control?: string;
}

const servers: Server[] = [];
let primary: Server;
let fast: Server;
let slow: Server;

async function start(delayMs: number): Promise<Server> {
  const server = await startServer<Server>({ delayMs }, async (server, _request, reply) => {
    if (server.delayMs) await new Promise((resolve) => setTimeout(resolve, server.delayMs));
    const bindings = encodeBindings({
      directoryVersion: 1,
      bindings: [{ logical: `${primary.origin}/file.txt`, prefix: false, replicas: servers.map((s) => `${s.origin}/file.txt`) }],
    }).value;
    reply.header(BINDINGS_HEADER, bindings);
    if (server.control) reply.header(CONTROL_HEADER, server.control);
    return reply.header('content-type', 'text/plain').send(`from ${server.origin}`);
  });
  servers.push(server);
  return server;
}

beforeAll(async () => {
  primary = await start(80);
  fast = await start(0);
  slow = await start(80);
});

afterAll(() => closeServers(servers));

afterEach(() => {
  for (const server of servers) {
    server.log.length = 0;
    delete server.control;
  }
});

function client(overrides: ConstructorParameters<typeof ReplicaClient>[0] = {}) {
  const events: WebppEvent[] = [];
  const unregistered: string[] = [];
  const instance = new ReplicaClient({
    internal: { preset: 'fast', flushDelayMs: 0 },
    policies: withTableViews(createPolicy), // every policy of core's registry, as a Workbox worker has them
    selfOrigin: primary.origin,
    storage: memoryKeyValueStore(),
    observeResourceTiming: false,
    publish: (batch) => void events.push(...batch),
    unregister: async () => void unregistered.push('unregistered'),
    notifyPages: async () => undefined,
    ...overrides,
  });
  return { instance, events, unregistered };
}

/** Lets the client learn the bindings from one observed same-origin fetch. */
async function learn(instance: ReplicaClient): Promise<void> {
  await instance.ready;
  const request = new Request(`${primary.origin}/file.txt`);
  expect(instance.route(request)).toBe('observe');
  const io = eventIO();
  await (await instance.respond(request, io)).text();
  await io.settled();
}

describe('ReplicaClient', () => {
  it('passes through what it has no bindings for, and other methods always', async () => {
    const { instance } = client();
    await instance.ready;
    expect(instance.route(new Request(`${slow.origin}/file.txt`))).toBe('pass'); // another origin, unbound
    expect(instance.route(new Request(`${primary.origin}/file.txt`, { method: 'POST', body: 'x' }))).toBe('pass');
    await learn(instance);
    expect(instance.route(new Request(`${primary.origin}/file.txt`))).toBe('bind');
    expect(instance.route(new Request(`${primary.origin}/file.txt`, { method: 'HEAD' }))).toBe('bind');
    expect(instance.route(new Request(`${primary.origin}/file.txt`, { method: 'PUT', body: 'x' }))).toBe('pass');
  });

  it('binds to the fastest replica once the table knows them all', async () => {
    const { instance } = client();
    await learn(instance);
    let servedBy: string | undefined;
    const knownServers = (): string[] => instance.snapshot().servers.map((server) => server.server).sort();
    const allServers = servers.map((s) => s.origin).sort();
    // Requests (and the HEAD refreshes they trigger) until the table knows every replica
    // and the last request went to the fastest one; bounded.
    for (let i = 0; i < 20; i++) {
      const io = eventIO();
      const response = await instance.respond(new Request(`${primary.origin}/file.txt`), io);
      await response.text();
      await io.settled();
      servedBy = instance.snapshot().decisions.at(-1)?.servedBy;
      if (servedBy === fast.origin && knownServers().length === allServers.length) break;
    }
    expect(knownServers()).toEqual(allServers);
    expect(servedBy).toBe(fast.origin);
  });

  it('hands a bound answer to the page before it learns from it (after respondWith\'s own reaction)', async () => {
    const { instance } = client();
    await learn(instance);
    const servedBefore = instance.snapshot().counters.served;
    const pending: Promise<unknown>[] = [];
    let servedWhenAnswered: number | undefined;
    let answered: Promise<Response> | undefined;
    // A fetch event as the browser drives it: respondWith reacts to the promise it is given first.
    const event = {
      request: new Request(`${primary.origin}/file.txt`),
      clientId: '',
      resultingClientId: '',
      respondWith: (promise: Promise<Response>) => {
        answered = promise.then((response) => ((servedWhenAnswered = instance.snapshot().counters.served), response));
      },
      waitUntil: (promise: Promise<unknown>) => void pending.push(promise),
    } as unknown as FetchEvent;
    expect(instance.handleFetch(event)).toBe(true);
    expect(await (await answered!).text()).toMatch(/^from /);
    while (pending.length > 0) await Promise.allSettled(pending.splice(0));
    expect(servedWhenAnswered).toBe(servedBefore); // the learn stage had not run when the page got its answer
    expect(instance.snapshot().counters.served).toBe(servedBefore + 1); // it ran after, inside waitUntil
    expect(instance.snapshot().decisions.at(-1)?.logicalUrl).toBe(`${primary.origin}/file.txt`);
  });

  it('fails open: an internal error falls back to a plain fetch of the request', async () => {
    const { instance, events } = client({
      policy: {
        ...createPolicy('fast', { random: Math.random, now: Date.now })!,
        name: 'broken',
        plan: () => {
          throw new Error('policy bug');
        },
      },
    });
    await learn(instance);
    const response = await instance.respond(new Request(`${primary.origin}/file.txt`), eventIO());
    expect(await response.text()).toBe(`from ${primary.origin}`);
    expect(instance.snapshot().counters.internalErrors).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(events.some((event) => event.type === 'internal-error' && event.message.includes('policy bug'))).toBe(true);
  });

  it('fails open when the stored state does not come: a request waits at most a second, then goes out as it is', async () => {
    const stuck = { ...memoryKeyValueStore(), getMany: () => new Promise<unknown[]>(() => undefined) }; // a blocked IndexedDB
    const { instance } = client({ storage: stuck });
    const request = new Request(`${primary.origin}/file.txt`);
    expect(instance.route(request)).toBe('wait');
    const response = await instance.respond(request, eventIO());
    expect(await response.text()).toBe(`from ${primary.origin}`);
    expect(primary.log.length).toBe(1);
  }, 5_000);

  it('switches itself off on `webpp-control: off` from its own origin, remembers it, and unregisters', async () => {
    const storage = memoryKeyValueStore();
    const { instance, unregistered } = client({ storage });
    await learn(instance);
    primary.control = 'off';
    const io = eventIO();
    // A request the worker observes (no binding) reaches the own origin.
    await (await instance.respond(new Request(`${primary.origin}/page`), io)).text();
    await io.settled();
    expect(instance.isEnabled).toBe(false);
    expect(instance.route(new Request(`${primary.origin}/file.txt`))).toBe('pass');
    expect(unregistered).toEqual(['unregistered']);

    // A worker installed again soon after stays off.
    const again = client({ storage });
    await again.instance.ready;
    expect(again.instance.isEnabled).toBe(false);
    expect(again.unregistered).toEqual(['unregistered']);
  });

  it('ignores `webpp-control: off` from a replica (trust rule) and reports it', async () => {
    const { instance, unregistered, events } = client();
    await learn(instance);
    fast.control = 'off';
    slow.control = 'off';
    // Every request asks a replica first (bounded): none of their switch-offs counts.
    for (let i = 0; i < 6; i++) {
      const io = eventIO();
      await (await instance.respond(new Request(`${primary.origin}/file.txt`), io)).text();
      await io.settled();
    }
    const askedReplicas = instance.snapshot().decisions.some((decision) => decision.servedBy !== primary.origin);
    expect(askedReplicas).toBe(true);
    expect(instance.isEnabled).toBe(true);
    expect(unregistered).toEqual([]);
    expect(instance.snapshot().counters.untrustedHeaders).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(events.some((event) => event.type === 'untrusted-header' && (event.server === fast.origin || event.server === slow.origin))).toBe(true);
  });

  it('uses a registered policy by name: a hedging policy asks the second replica when the first is slow', async () => {
    // A baseline underneath: it sends no background requests.
    registerPolicy('test-hedge', (deps) => ({
      ...createPolicy('random', deps)!,
      name: 'test-hedge',
      plan: () => [
        { server: slow.origin, timeoutMs: 2_000, reason: 'first' },
        { server: fast.origin, timeoutMs: 2_000, reason: 'hedge', hedgeAfterMs: 20 },
      ],
    }));
    const { instance } = client({ settings: { policy: 'test-hedge' } });
    await learn(instance);
    const response = await instance.respond(new Request(`${primary.origin}/file.txt`), eventIO());
    expect(await response.text()).toBe(`from ${fast.origin}`);
    const decision = instance.snapshot().decisions.at(-1);
    expect(decision?.policy).toBe('test-hedge');
    expect(decision?.attempts.map((a) => [a.server, a.outcome])).toEqual([
      [slow.origin, 'cancelled'],
      [fast.origin, 'served'],
    ]);
    // Policies without maintenance send no background requests.
    expect(primary.log.filter((line) => line.startsWith('HEAD'))).toEqual([]);
  });

  it('runs core\'s policies by name: `paper` is the extended Refresh with the paper\'s values, `refresh` still works', async () => {
    const { instance } = client({ settings: { policy: 'paper' }, internal: { flushDelayMs: 0 } });
    expect(instance.policy.name).toBe('paper');
    expect(instance.configErrors).toEqual([]);
    expect(instance.snapshot().config).toEqual(PAPER_DEFAULTS);
    await learn(instance);
    const response = await instance.respond(new Request(`${primary.origin}/file.txt`), eventIO());
    await response.text();
    expect(instance.snapshot().decisions.at(-1)?.policy).toBe('paper');
    expect(client({ settings: { policy: 'refresh' }, internal: { preset: 'fast' } }).instance.snapshot().config).toEqual(FAST_PRESET);
  });

  it('shows a table policy\'s latency table in full (its rows come with the policies add-on\'s resolver), and webpp\'s rows from its own description', async () => {
    const { instance } = client({ settings: { policy: 'paper' }, internal: { flushDelayMs: 0 } });
    await learn(instance);
    const response = await instance.respond(new Request(`${primary.origin}/file.txt`), eventIO());
    await response.text();
    const served = instance.snapshot().decisions.at(-1)?.servedBy;
    const row = instance.snapshot().servers.find((view) => view.server === served);
    expect(row?.sampleCount).toBeGreaterThan(0);
    expect(row?.probeIntervalMs).toBe(PAPER_DEFAULTS.probeIntervalMs);
    expect(Object.keys(instance.snapshot().table.servers)).toContain(served);
    const { instance: webpp } = client({ settings: { policy: 'webpp' }, internal: { flushDelayMs: 0 } });
    await learn(webpp);
    await (await webpp.respond(new Request(`${primary.origin}/file.txt`), eventIO())).text();
    expect(webpp.snapshot().servers.find((view) => view.server === webpp.snapshot().decisions.at(-1)?.servedBy)?.sampleCount).toBeGreaterThan(0);
    expect(webpp.snapshot().table).toEqual({ formatVersion: 1, servers: {} });
  });

  it('a bad selection parameter of the paper\'s policies is reported by the policy, and the worker still runs on the preset\'s values', () => {
    const { instance } = client({ settings: { policy: 'paper' }, internal: { flushDelayMs: 0, ttlMs: -5 } });
    expect(instance.configErrors).toEqual(['policy "paper": SelectionConfig.ttlMs must be > 0 (got -5); using "refresh"']);
    expect(instance.policy.name).toBe('refresh');
    // The site's timeouts are in range but contradict the paper's floor: the same.
    const { instance: timeouts } = client({ settings: { policy: 'paper', initialTimeoutMs: 500 }, internal: { flushDelayMs: 0 } });
    expect(timeouts.configErrors).toEqual([expect.stringMatching(/^policy "paper": SelectionConfig.initialTimeoutMs must be within/)]);
    expect(timeouts.policy.name).toBe('refresh');
    // Under the default `webpp` policy the paper's parameters are not used, so not checked.
    expect(client({ settings: { initialTimeoutMs: 500 }, internal: { flushDelayMs: 0, ttlMs: -5 } }).instance.configErrors).toEqual([]);
  });

  it('without a policy resolver (the bundled worker without its policies add-on) only `webpp` runs; another name falls back to it', () => {
    const instance = new ReplicaClient({ settings: { policy: 'paper' }, selfOrigin: primary.origin, storage: memoryKeyValueStore(), observeResourceTiming: false, publish: () => undefined });
    expect(instance.policy.name).toBe('webpp');
    expect(instance.configErrors).toEqual(['unknown policy "paper"; using "webpp"']);
    expect(new ReplicaClient({ selfOrigin: primary.origin, storage: memoryKeyValueStore(), observeResourceTiming: false, publish: () => undefined }).configErrors).toEqual([]);
  });

  it('an unknown policy name is reported and the paper policy runs', () => {
    const { instance } = client({ settings: { policy: 'no-such-policy' } });
    expect(instance.policy.name).toBe('refresh');
    expect(instance.configErrors).toEqual(['unknown policy "no-such-policy"; using "refresh"']);
  });

  it('sends an asynchronous HEAD to servers whose entries expired, inside waitUntil', async () => {
    const { instance } = client({ internal: { preset: 'fast', ttlMs: 1, flushDelayMs: 0 } });
    await learn(instance);
    for (const server of servers) server.log.length = 0;
    const io = eventIO();
    await (await instance.respond(new Request(`${primary.origin}/file.txt`), io)).text();
    await io.settled();
    const heads = servers.flatMap((server) => server.log.filter((line) => line === 'HEAD /file.txt'));
    expect(heads.length).toBeGreaterThanOrEqual(1);
    expect(instance.snapshot().counters.refreshes).toBeGreaterThanOrEqual(1);
  });
});

describe('ReplicaClient and its own scripts', () => {
  it('never binds the page script or the worker script, even under a directory wildcard', async () => {
    const { instance } = client({ ownScriptPaths: ['/webpp.js', '/webpp-sw.js'] });
    await instance.ready;
    expect(instance.route(new Request(`${primary.origin}/webpp.js`))).toBe('pass');
    expect(instance.route(new Request(`${primary.origin}/webpp-sw.js?policy=fast`))).toBe('pass');
    expect(instance.route(new Request(`${primary.origin}/webpp.json`))).not.toBe('pass');
  });
});

describe('ReplicaClient, a cold worker\'s navigation (cold-navigation.ts)', () => {
  /** A navigation, as a fetch event brings it (Node's Request cannot be built with mode 'navigate'). */
  function navigation(url: string): Request {
    const request = new Request(url);
    Object.defineProperty(request, 'mode', { value: 'navigate' });
    return request;
  }

  /** The same stored state, whose start-up read (one getMany) waits until `open()`: a slow IndexedDB. */
  function slowStart(storage: KeyValueStore): { storage: KeyValueStore; open: () => void } {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    return { storage: { ...storage, getMany: async (keys) => (await gate, Promise.all(keys.map((key) => storage.get(key)))) }, open };
  }

  const pending = <T>(promise: Promise<T>): Promise<T | 'pending'> => Promise.race([promise, new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), 20))]);

  /** A stored state that binds /file.txt (a first worker's, written). */
  async function storedState(): Promise<KeyValueStore> {
    const storage = memoryKeyValueStore();
    const first = client({ storage });
    await learn(first.instance);
    await first.instance.flush();
    for (const server of servers) server.log.length = 0;
    return storage;
  }

  it('gives the page the preload\'s answer before the state is restored, and learns it after (a bound navigation, served by the own origin)', async () => {
    const slow = slowStart(await storedState());
    const { instance } = client({ storage: slow.storage });
    const request = navigation(`${primary.origin}/file.txt`);
    expect(instance.route(request)).toBe('wait');
    const io = eventIO();
    const response = await pending(instance.respond(request, { ...io, preload: Promise.resolve(new Response('from the preload')) }));
    expect(response).not.toBe('pending');
    expect(await (response as Response).text()).toBe('from the preload');
    expect(servers.flatMap((server) => server.log)).toEqual([]); // the worker sent nothing
    expect(instance.snapshot().decisions).toEqual([]); // nothing learnt yet
    slow.open();
    await io.settled();
    expect(instance.snapshot().decisions.at(-1)).toMatchObject({ navigation: true, logicalUrl: `${primary.origin}/file.txt`, servedBy: primary.origin, outcome: 'served' });
    expect(instance.snapshot().decisions.at(-1)?.attempts[0]?.reason).toBe('preload-before-restore');
    expect(instance.snapshot().counters).toMatchObject({ bound: 1, served: 1 });
  });

  it('a stored switch-off still holds: the page has the own origin\'s answer, and nothing is learnt from it', async () => {
    const storage = await storedState();
    await storage.set(CONTROL_KEY, { off: true, atMs: Date.now() });
    const slow = slowStart(storage);
    const { instance, unregistered } = client({ storage: slow.storage });
    const io = eventIO();
    const response = await instance.respond(navigation(`${primary.origin}/file.txt`), { ...io, preload: Promise.resolve(new Response('from the preload')) });
    expect(await response.text()).toBe('from the preload');
    slow.open();
    await io.settled();
    expect(instance.isEnabled).toBe(false);
    expect(unregistered).toEqual(['unregistered']);
    expect(instance.snapshot().decisions).toEqual([]);
  });

  for (const [what, preload] of [
    ['answers 503', () => Promise.resolve(new Response('down', { status: 503 }))],
    ['hangs', () => new Promise<Response>(() => undefined)],
  ] as const) {
    it(`a preload that ${what} is not the page's answer: the navigation waits for the state and goes to the replicas`, async () => {
      const slow = slowStart(await storedState());
      const { instance } = client({ storage: slow.storage });
      const io = eventIO();
      const answer = instance.respond(navigation(`${primary.origin}/file.txt`), { ...io, preload: preload() });
      expect(await pending(answer)).toBe('pending');
      slow.open();
      const response = await answer;
      expect(response.status).toBe(200);
      expect(await response.text()).toMatch(/^from http/);
      await io.settled();
      expect(instance.snapshot().decisions.at(-1)?.attempts[0]?.reason).not.toBe('preload-before-restore');
    });
  }
});
