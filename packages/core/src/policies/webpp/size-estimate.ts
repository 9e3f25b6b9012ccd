/**
 * Unknown sizes (issue 22 §2): the expected body size of a URL this client never fetched and
 * the bindings give no size for, from what it knows, most specific first:
 * 1. the same path under another query (cache-busting `?v=`, a new asset version): its sizes;
 * 2. the resource type (the path's extension): the mean of its sizes, shrunk toward
 * 3. the site's observed size distribution (its mean), by how many of the type were seen.
 *
 * The estimate is a mean, not a median: the expected time the policy ranks by,
 * E[T] = E[first byte] + E[size] / throughput (expected-time.ts), is linear in the size, so
 * the mean size gives the expected time exactly where a median would under-rank thin links
 * for a heavy-tailed mix. The shrinkage is empirical Bayes (Efron and Morris, "Stein's
 * Paradox in Statistics", Sci. Am. 1977; the James–Stein estimator): a type seen n times
 * weighs n / (n + TYPE_PRIOR_WEIGHT) against the site's mean, so one odd file of a type does
 * not set the type, and a type seen often speaks for itself. HTTP Archive's page-weight
 * figures show why the type matters: images and scripts differ by an order of magnitude in
 * median size, so the type is the strongest cheap predictor of a URL's size.
 *
 * Pure and bounded (a few thousand paths); the sizes come from the bindings' sizes and
 * from complete bodies (ClientPolicy.learnSize).
 */

/** How many samples of the site's mean a type's mean is shrunk toward (empirical Bayes prior weight). */
const TYPE_PRIOR_WEIGHT = 1;
/** Most paths remembered (the oldest forgotten first). */
const MAX_PATHS = 4_096;
/** Most types (extensions) remembered. */
const MAX_TYPES = 256;

interface Mean {
  count: number;
  sumBytes: number;
}

const meanOf = (mean: Mean): number => mean.sumBytes / mean.count;

/** The path without query or fragment, and its extension ('' when none), from a logical URL. */
function pathAndType(logicalUrl: string): { path: string; type: string } {
  const end = logicalUrl.search(/[?#]/);
  const path = end < 0 ? logicalUrl : logicalUrl.slice(0, end);
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  const type = dot <= 0 ? '' : name.slice(dot + 1).toLowerCase().slice(0, 16);
  return { path, type };
}

export class SizeEstimates {
  private readonly exact = new Map<string, number>();
  private readonly paths = new Map<string, Mean>();
  private readonly types = new Map<string, Mean>();
  private readonly site: Mean = { count: 0, sumBytes: 0 };

  /** A body of `sizeBytes` for `logicalUrl` (a binding's size, a Content-Length, a complete body). */
  learn(logicalUrl: string, sizeBytes: number): void {
    if (!(sizeBytes >= 0) || !Number.isFinite(sizeBytes)) return;
    const before = this.exact.get(logicalUrl);
    if (before === sizeBytes) return; // the same resource again teaches the distributions nothing
    remember(this.exact, logicalUrl, sizeBytes, MAX_PATHS);
    const { path, type } = pathAndType(logicalUrl);
    add(this.paths, path, sizeBytes, MAX_PATHS);
    add(this.types, type, sizeBytes, MAX_TYPES);
    this.site.count++;
    this.site.sumBytes += sizeBytes;
  }

  /** The expected size of `logicalUrl` (bytes), or undefined when nothing is known yet. */
  estimate(logicalUrl: string): number | undefined {
    const exact = this.exact.get(logicalUrl);
    if (exact !== undefined) return exact;
    const { path, type } = pathAndType(logicalUrl);
    const samePath = this.paths.get(path);
    if (samePath !== undefined) return meanOf(samePath);
    if (this.site.count === 0) return undefined;
    const siteMeanBytes = meanOf(this.site);
    const ofType = this.types.get(type);
    if (ofType === undefined) return siteMeanBytes;
    // Shrunk toward the site's mean: (n·mean_type + k·mean_site) / (n + k).
    return (ofType.sumBytes + TYPE_PRIOR_WEIGHT * siteMeanBytes) / (ofType.count + TYPE_PRIOR_WEIGHT);
  }
}

function remember<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value as string);
}

function add(map: Map<string, Mean>, key: string, sizeBytes: number, max: number): void {
  const mean = map.get(key) ?? { count: 0, sumBytes: 0 };
  mean.count++;
  mean.sumBytes += sizeBytes;
  remember(map, key, mean, max);
}
