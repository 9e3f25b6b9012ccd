/**
 * "Which replica served each resource of the last gallery load": the dashboard loads the
 * gallery in its preview frame, lists what that document fetched (the document itself plus
 * its Resource Timing entries: images, stylesheet, fonts, scripts), and matches each URL
 * with the worker's decision for it made during that load.
 */
import type { DecisionRecord } from '@webpp/sw';
import type { ServedResourceView } from './model.js';

export interface GalleryLoad {
  startedAtMs: number;
  finishedAtMs: number;
  /** Logical URLs the gallery document loaded, in load order, the document first. */
  urls: string[];
}

/** What the frame's document fetched; call after its load event. Same-origin frames only. */
export function collectLoadedUrls(frame: HTMLIFrameElement): string[] {
  const frameWindow = frame.contentWindow;
  if (!frameWindow) return [];
  const urls = [frameWindow.location.href];
  for (const entry of frameWindow.performance.getEntriesByType('resource')) {
    if (!urls.includes(entry.name)) urls.push(entry.name);
  }
  return urls;
}

/** Matches each URL with the newest decision for it that is not older than the load. */
export function attributeLoad(load: GalleryLoad, decisions: readonly DecisionRecord[]): ServedResourceView[] {
  // Decisions are timestamped when the request reached the worker, so allow a little slack.
  const earliestMs = load.startedAtMs - 250;
  const newestByUrl = new Map<string, DecisionRecord>();
  for (const decision of decisions) {
    if (decision.atMs < earliestMs || decision.atMs > load.finishedAtMs + 250) continue;
    const previous = newestByUrl.get(decision.logicalUrl);
    if (!previous || previous.atMs <= decision.atMs) newestByUrl.set(decision.logicalUrl, decision);
  }
  return load.urls.map((url) => {
    const decision = newestByUrl.get(url) ?? newestByUrl.get(stripHash(url));
    if (!decision) return { url, server: undefined, failedServers: [], passThrough: true };
    const failedServers = decision.attempts
      .filter((attempt) => attempt.outcome !== 'served' && attempt.outcome !== 'cancelled')
      .map((attempt) => attempt.server);
    return { url, server: decision.servedBy, failedServers, passThrough: false };
  });
}

function stripHash(url: string): string {
  const index = url.indexOf('#');
  return index === -1 ? url : url.slice(0, index);
}
