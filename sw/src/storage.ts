/**
 * The worker's persistent storage: a tiny key-value interface over idb-keyval, so that the
 * stores stay testable and a Workbox site can choose its own database name.
 */
import { createStore, get, getMany, set, update } from 'idb-keyval';

export interface KeyValueStore {
  get(key: string): Promise<unknown>;
  set(key: string, value: unknown): Promise<void>;
  /**
   * Atomic read-modify-write: `updater` sees the stored value and returns the new one, all
   * inside one IndexedDB readwrite transaction (idb-keyval `update`).
   */
  update(key: string, updater: (stored: unknown) => unknown): Promise<void>;
  /** Several keys in one read (one IndexedDB transaction); default: one get per key. */
  getMany?(keys: readonly string[]): Promise<unknown[]>;
}

/** The stored values of `keys`, in one read where the store can (the worker's start-up reads its whole state so). */
export function readAll(storage: KeyValueStore, keys: readonly string[]): Promise<unknown[]> {
  return storage.getMany ? storage.getMany(keys) : Promise.all(keys.map((key) => storage.get(key)));
}

/** Database and object store names used by the bundled worker. */
const DEFAULT_DB_NAME = 'webpp';
const DEFAULT_STORE_NAME = 'state';

/** Storage keys. */
export const LATENCY_TABLE_KEY = 'latency-table';
export const BINDINGS_KEY = 'bindings';
export const CONTROL_KEY = 'control';
export const DIGESTS_KEY = 'digests';
/** The pages whose navigation the own origin answered (direct.ts). */
export const PAGES_KEY = 'pages';

/** IndexedDB through idb-keyval. The database is opened lazily, on first use. */
export function idbKeyValueStore(dbName = DEFAULT_DB_NAME, storeName = DEFAULT_STORE_NAME): KeyValueStore {
  let useStore: ReturnType<typeof createStore> | undefined;
  const store = (): ReturnType<typeof createStore> => (useStore ??= createStore(dbName, storeName));
  return {
    get: (key) => get(key, store()),
    set: (key, value) => set(key, value, store()),
    update: (key, updater) => update(key, updater, store()),
    getMany: (keys) => getMany([...keys], store()),
  };
}

/** An in-memory store, for environments without IndexedDB (and for unit tests). */
export function memoryKeyValueStore(): KeyValueStore {
  const values = new Map<string, unknown>();
  const copy = (value: unknown): unknown => (value === undefined ? undefined : structuredClone(value));
  return {
    get: async (key) => copy(values.get(key)),
    set: async (key, value) => void values.set(key, copy(value)),
    update: async (key, updater) => void values.set(key, copy(updater(copy(values.get(key))))),
  };
}
