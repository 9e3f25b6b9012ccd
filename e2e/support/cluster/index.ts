/** The test cluster: real @webpp/origin replicas behind @webpp/netem emulators (cluster.ts). */
export { Cluster } from './cluster.js';
export { ClusterReplica } from './replica.js';
export { demoSite, PIXEL_PNG, type Site } from './site.js';
