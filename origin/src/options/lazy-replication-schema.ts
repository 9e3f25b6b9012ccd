/**
 * Options of lazy replication (issue 14; DCWS, Baker and Moon 1998, Section 4.4 and
 * Table 1): a co-op fetches the content of an automatic replica placed on it on its first
 * request, and revalidates its copy every T_validate. Composed into plugin-schema.ts.
 */
import { Type } from 'typebox';
import { defaulted } from './resolved.js';

const group = 'Replication';

export const lazyReplicationOptionProperties = {
  replicationValidateIntervalMs: defaulted(
    Type.Integer({
      minimum: 100,
      maximum: 86_400_000,
      default: 120_000,
      description:
        "T_validate: a co-op revalidates each automatic replica it fetched with a conditional request to its holders this often (a PUT reaches it at once; this bounds how long a change made another way, e.g. a file edited on the home's disk, stays unseen). Lower: fresher copies, more peer requests (Table 1: 120 s).",
      cli: { group },
    }),
  ),
};
