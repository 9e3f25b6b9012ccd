/** Options of Cluster.start (cluster.ts), defined once. */
import type { FastifyInstance } from 'fastify';
import type { WebppOriginOptions } from '@webpp/origin';
import type { LinkProfile, Scenario } from '@webpp/netem';
import type { TlsPem } from './replica.js';
import type { Site } from './site.js';

export interface DirectoryEntrySeed {
  logical: string;
  servers?: string[];
  physical?: string[];
}

export interface ClusterOptions {
  /** The site as files (one folder per replica), or… */
  site?: Site;
  /** …one folder served by every replica (left in place on stop). */
  root?: string;
  /** Replica names (host "<name>.localhost"); the first is the primary. Default a, b, c (or the scenario's servers). */
  names?: string[];
  /** Fixed round-trip delay per replica name, through its emulator. Default 0. */
  delaysMs?: Record<string, number>;
  /** A link profile per replica name (delay distribution, bandwidth, stalls); overrides delaysMs. */
  links?: Record<string, LinkProfile>;
  /** Seed of the emulators' random streams (each replica's is "<seed>-link-<name>"). */
  seed?: string | number;
  /**
   * Run each server as a `webpp-origin` child process (the CLI the README documents), so a
   * fault can be a real `kill -9` (replica.process.kill9()). No request log or server-side
   * faults then (they are hooks on an in-process server); needs `root` or `site`.
   */
  processes?: boolean;
  /** Emulate the links of this netem scenario (server names = replica names), on one timeline. */
  scenario?: Scenario | Record<string, unknown>;
  /** With `site`: which paths each replica holds (default all); the directory binds each path to its holders. */
  holds?: Record<string, string[]>;
  /** With `site`: worker options on the page script tag that replaces `<!--webpp-->`. Default {} (the defaults). */
  workerParams?: Record<string, string | number>;
  /** With `site`: HTML that replaces `<!--webpp-->` instead of the script tag. */
  pageScript?: string;
  /** The directory's entries, from the servers' origins by name. */
  entries?: (origins: Record<string, string>) => DirectoryEntrySeed[];
  /** HTTPS + HTTP/2 (through a TCP delay line: the link emulator speaks HTTP/1.1 only). */
  tls?: TlsPem;
  /** Plain HTTP through a TCP delay line too, instead of the link emulator (per-packet round trips). */
  tcpLink?: boolean;
  /** Each browser connection reaches the origins from its own loopback address (127.0.x.y), as another host of one network would. */
  distinctClientAddresses?: boolean;
  /** Real peers: every server names the others, with a shared cluster secret and an admin token. */
  peers?: boolean;
  /** Further plugin options for every replica (batch, contentDigests, cors…). */
  origin?: Partial<Omit<WebppOriginOptions, 'publicUrl' | 'logicalOrigin' | 'directory' | 'dataDir'>>;
  /** Per replica name: hooks added after the plugin (they see and may replace what it sends). */
  configure?: Record<string, (app: FastifyInstance) => void>;
  /** Called with every replica's app after the plugin. */
  afterPlugin?: (app: FastifyInstance, name: string) => void;
}
