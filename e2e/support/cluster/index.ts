/** The test cluster: real @webpp/origin replicas behind @webpp/netem emulators (cluster.ts). */
export { Cluster } from './cluster.js';
export type { ClusterOptions, DirectoryEntrySeed } from './options.js';
export { ClusterReplica, type TlsPem } from './replica.js';
export { RequestLog, type RequestLogEntry } from './request-log.js';
export { demoSite, pageScriptTag, PIXEL_PNG, type Site, type SiteFile } from './site.js';
export type { FaultState } from './faults.js';
export { TaggedTraffic, type ServerSideRequest, type TagTraffic } from './tagged-traffic.js';
