/**
 * Requests counted by query tag, as the link emulators saw them: the evaluation bench tags
 * each page request with `?p=<policy>&c=<client>&i=<index>`, the worker carries the query
 * over to the physical URL, and refreshes and probes reuse physical URLs it has seen. So
 * every request a policy caused, on any replica, is counted under its tag, with the
 * emulator's plan and timing for the GETs (the simulator's calibration uses them).
 */
import type { RequestPlan, RequestRecord } from '@webpp/netem';
import type { Cluster } from './cluster.js';

/** One request as an emulator saw it. */
export interface ServerSideRequest {
  server: string;
  method: string;
  client: number;
  index: number;
  outcome: RequestRecord['outcome'];
  plan: RequestPlan | null;
  bodyBytes: number;
  /** Arrival to last byte out, as the emulator measured it. */
  completeMs: number | undefined;
}

/** Per tag: requests by server and method, and the tagged GETs by "client|index". */
export interface TagTraffic {
  requests: number;
  byServer: Record<string, number>;
  byMethod: Record<string, number>;
  gets: Map<string, ServerSideRequest[]>;
}

function emptyTraffic(): TagTraffic {
  return { requests: 0, byServer: {}, byMethod: {}, gets: new Map() };
}

export class TaggedTraffic {
  private readonly byTag = new Map<string, TagTraffic>();
  private untagged = 0;

  /** Counts from now on every request of the cluster's emulators, by the `tagParam` query parameter. */
  constructor(cluster: Cluster, private readonly tagParam = 'p') {
    for (const replica of cluster.replicas) {
      replica.emulator?.events.on('request', (record) => this.count(replica.name, record));
    }
  }

  /** What the emulators saw under one tag. */
  traffic(tag: string): TagTraffic {
    return this.byTag.get(tag) ?? emptyTraffic();
  }

  /** Requests that carried no tag (page loads, scripts, set-up). */
  untaggedRequests(): number {
    return this.untagged;
  }

  private count(server: string, record: RequestRecord): void {
    const url = new URL(record.url, 'http://x');
    const tag = url.searchParams.get(this.tagParam);
    if (tag === null) {
      this.untagged++;
      return;
    }
    let traffic = this.byTag.get(tag);
    if (!traffic) this.byTag.set(tag, (traffic = emptyTraffic()));
    traffic.requests++;
    traffic.byServer[server] = (traffic.byServer[server] ?? 0) + 1;
    traffic.byMethod[record.method] = (traffic.byMethod[record.method] ?? 0) + 1;
    if (record.method !== 'GET') return;
    const client = url.searchParams.get('c');
    const index = url.searchParams.get('i');
    const entry: ServerSideRequest = {
      server,
      method: record.method,
      client: Number(client),
      index: Number(index),
      outcome: record.outcome,
      plan: record.plan,
      bodyBytes: record.bodyBytes,
      completeMs: record.completeMs,
    };
    const key = `${client}|${index}`;
    const list = traffic.gets.get(key);
    if (list) list.push(entry);
    else traffic.gets.set(key, [entry]);
  }
}
