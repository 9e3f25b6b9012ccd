import { Cluster, demoSite } from './index.js';
import { decodeBindings } from '@webpp/core';
const cluster = await Cluster.start({ site: demoSite(4) });
for (const path of ['/index.html', '/big.txt', '/data.json']) {
  const res = await fetch(cluster.logicalUrl(path).replace('a.localhost', '127.0.0.1'));
  const h = res.headers.get('webpp-bindings');
  console.log(path, res.status, h?.slice(0, 300));
}
await cluster.stop();
