/**
 * The request path's shape (issue 26 §2): route → plan → attempt → serve → learn, each stage
 * calling the next and none calling back into the client; every plugin callback called in one
 * place; and docs/service-worker.md's "The request path" tables as the code has them, checked
 * against the plugins of a running client with every opt-in feature on.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { STAGES, pluginCallbacks, pluginRows, requestPathMarkdown, stageRows } from '../../scripts/request-path.js';
import type { ClientParts } from '../src/assemble.js';
import { createClientAggregate } from '../src/client-aggregate.js';
import { createIntegrity } from '../src/integrity-guard.js';
import { createOfflineCopies } from '../src/offline-cache.js';
import { ReplicaClient } from '../src/replica-client.js';
import { memoryKeyValueStore } from '../src/storage.js';
import { MemoryCache } from './support/memory-cache.js';

const SW_SRC = fileURLToPath(new URL('../src/', import.meta.url));
const read = (file: string): string => readFileSync(`${SW_SRC}${file}`, 'utf8');

/** A client as a worker with every opt-in feature has it (the unusable-replicas plugin is a worker's only). */
function fullClient(): ReplicaClient {
  (globalThis as { registration?: unknown }).registration = {};
  return new ReplicaClient({
    selfOrigin: 'https://site.test',
    storage: memoryKeyValueStore(),
    observeResourceTiming: false,
    publish: () => undefined,
    unregister: async () => undefined,
    notifyPages: async () => undefined,
    integrity: createIntegrity,
    offlineCopies: createOfflineCopies,
    openOfflineCache: async () => new MemoryCache(),
    clientAggregate: createClientAggregate,
  });
}

afterEach(() => {
  delete (globalThis as { registration?: unknown }).registration;
});

describe('the request path', () => {
  it('is linear: the client enters route and plan, and each stage calls only the next one', () => {
    const calls = Object.fromEntries(stageRows().map((row) => [row.stage, row.calls]));
    expect(calls).toEqual({
      'fetch handler': ['route.ts', 'plan.ts'],
      route: [],
      plan: ['attempt.ts'],
      attempt: ['serve.ts'],
      serve: ['learn.ts'],
      learn: [],
    });
    // No stage reaches back into a hub: the client, or the assembly of its parts.
    for (const { file } of STAGES.slice(1)) expect(read(file)).not.toMatch(/from '\.\/(replica-client|assemble)\.js'/);
  });

  it('calls every plugin callback in one place, from a stage', () => {
    const places = new Map<string, string[]>();
    for (const file of readdirTs()) {
      for (const match of read(file).matchAll(/lifecycle\.(?:notify|with)\('(\w+)'/g)) places.set(match[1]!, [...(places.get(match[1]!) ?? []), file]);
    }
    for (const callback of pluginCallbacks()) expect(places.get(callback), callback).toHaveLength(1);
    const stageFiles = new Set<string>(STAGES.map((stage) => stage.file));
    for (const [callback, files] of places) expect(stageFiles.has(files[0]!), `${callback} in ${files[0]}`).toBe(true);
  });

  it('has the plugins the docs list, in that order, with those callbacks', () => {
    const client = fullClient();
    const running = (client as unknown as { parts: ClientParts }).parts.path.lifecycle.plugins.map((plugin) => Object.keys(plugin).sort());
    const documented = pluginRows().map(({ callbacks }) => [...callbacks].sort());
    expect(documented).toEqual(running);
    expect(running).toHaveLength(15); // with every opt-in feature, in a worker
  });

  it('is documented as the code has it (npm run docs:options)', () => {
    const docs = readFileSync(fileURLToPath(new URL('../../docs/service-worker.md', import.meta.url)), 'utf8');
    const start = '<!-- generated:request-path (npm run docs:options) -->\n';
    const block = docs.slice(docs.indexOf(start) + start.length, docs.indexOf('\n<!-- /generated:request-path -->'));
    expect(block).toBe(requestPathMarkdown());
  });
});

function readdirTs(): string[] {
  return readdirSync(SW_SRC).filter((file) => file.endsWith('.ts'));
}
