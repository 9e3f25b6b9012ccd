/** The webpp demo as a library: start the cluster programmatically (tests, screenshots). */
export { startDemo, DEFAULT_CONTROL_PORT, DEFAULT_REPLICA_PORTS, type DemoOptions, type RunningDemo } from './cluster/demo-cluster.js';
export { DEFAULT_REPLICA_LINKS, SLOW_DOWN_EXTRA_DELAY_MS, describeLink, type ReplicaLinkSpec } from './cluster/link-profiles.js';
export { SITE_ENTRIES } from './cluster/site-app.js';
