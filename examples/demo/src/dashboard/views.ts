/** Renders the dashboard's panels from the view model. Pure DOM building, no state. */
import type { ServerId } from '@webpp/core';
import type { ServerView } from '@webpp/sw';
import type { ReplicaAction } from './control-client.js';
import { h } from './dom.js';
import { formatAge, formatClock, formatDueIn, formatMs, hostOf, shortUrl } from './format.js';
import type { ReplicaView, ServedResourceView, TimelineEventView } from './model.js';

export interface Palette {
  colorOf(server: ServerId): string;
  labelOf(server: ServerId): string;
}

// ------------------------------------------------------------------ replica cards

export function replicaCard(
  replica: ReplicaView,
  palette: Palette,
  controlsEnabled: boolean,
  onAction: (replica: ReplicaView, action: ReplicaAction) => void,
): HTMLElement {
  const runningPill = h('span', {
    className: 'pill',
    text: replica.running ? (replica.slowed ? 'Running, slowed' : 'Running') : 'Stopped',
    dataset: { tone: replica.running ? (replica.slowed ? 'warn' : 'ok') : 'bad' },
  });
  const button = (label: string, action: ReplicaAction, extraClass = ''): HTMLButtonElement => {
    const element = h('button', {
      className: `button ${extraClass}`.trim(),
      text: label,
      attrs: { type: 'button', 'data-action': action, 'data-replica': replica.id },
    });
    element.disabled = !controlsEnabled;
    element.addEventListener('click', () => onAction(replica, action));
    return element;
  };
  const counts = replica.requestCounts;
  return h(
    'article',
    {
      className: 'replica-card',
      style: { '--replica-color': palette.colorOf(replica.server) },
      dataset: { replica: replica.id, running: String(replica.running) },
    },
    h('div', { className: 'replica-card-head' }, h('span', { className: 'replica-name', text: palette.labelOf(replica.server) }), runningPill),
    h('div', { className: 'replica-origin', text: replica.server }),
    h('div', { className: 'replica-link', text: `${replica.title} · ${replica.linkDescription}` }),
    h('div', {
      className: 'replica-stats',
      text: `Served ${counts.get} GET and ${counts.head} HEAD requests${counts.other ? `, ${counts.other} other` : ''}`,
    }),
    h(
      'div',
      { className: 'replica-actions' },
      replica.running ? button('Stop', 'stop', 'danger') : button('Restart', 'start', 'primary'),
      replica.slowed ? button('Restore speed', 'restore') : button('Slow down', 'slow'),
    ),
  );
}

// ------------------------------------------------------------------ latency table

/** `paperTable` false: the policy reports no standard deviation or timeout (latency-columns.ts), shown as —. */
export function latencyRow(view: ServerView, palette: Palette, best: boolean, selectPercentile: number, paperTable: boolean): HTMLTableRowElement {
  const statePill = h('span', {
    className: 'pill',
    text: view.state === 'failed' ? 'Failed' : view.expired ? 'Available · expired' : 'Available',
    dataset: { tone: view.state === 'failed' ? 'bad' : view.expired ? 'warn' : 'ok' },
  });
  const row = h(
    'tr',
    { className: best ? 'best' : '', dataset: { server: view.server, state: view.state } },
    h(
      'td',
      {},
      h(
        'span',
        { className: 'server-cell', style: { '--replica-color': palette.colorOf(view.server) } },
        h('span', { className: 'swatch' }),
        h('span', { text: palette.labelOf(view.server) }),
      ),
    ),
    h('td', {}, statePill),
    h('td', { className: 'num', text: view.sampleCount > 0 ? formatMs(view.meanMs) : '—' }),
    h('td', { className: 'num', text: paperTable && view.sampleCount > 1 ? formatMs(view.stdDevMs) : '—' }),
    h('td', {
      className: 'num',
      text: view.sPercentileMs === null ? '—' : formatMs(view.sPercentileMs),
      attrs: { title: paperTable ? `${selectPercentile}th percentile of latency, paper eq. (1)` : 'the policy\'s estimate of time to first byte' },
    }),
    h('td', { className: 'num', text: paperTable ? formatMs(view.timeoutMs) : '—' }),
    h('td', { className: 'num', text: String(view.sampleCount) }),
    h('td', { className: 'num', text: view.lastSampleAgeMs === null ? 'never' : formatAge(view.lastSampleAgeMs) }),
    h('td', { className: 'num', text: view.nextProbeInMs === null ? '—' : formatDueIn(view.nextProbeInMs) }),
  );
  return row;
}

// ------------------------------------------------------------------ last load

export function servedBars(resources: readonly ServedResourceView[], servers: readonly ServerId[], palette: Palette): HTMLElement[] {
  const counts = countByServer(resources);
  const total = Math.max(1, resources.length);
  const rows = servers.map((server) => {
    const count = counts.get(server) ?? 0;
    return h(
      'div',
      { className: 'served-bar', style: { '--replica-color': palette.colorOf(server) }, dataset: { server, count: String(count) } },
      h('span', { className: 'tag', text: palette.labelOf(server) }),
      h('span', { className: 'served-bar-track' }, h('span', { className: 'served-bar-fill', style: { width: `${(100 * count) / total}%`, display: 'block' } })),
      h('span', { className: 'count', text: String(count) }),
    );
  });
  const extra: [string, string, number][] = [
    ['unbound', 'not bound', resources.filter((resource) => resource.server === undefined && resource.passThrough).length],
    ['failed', 'not delivered', resources.filter((resource) => resource.server === undefined && !resource.passThrough).length],
  ];
  for (const [key, label, count] of extra) {
    if (count === 0) continue;
    rows.push(
      h(
        'div',
        { className: 'served-bar', dataset: { server: key, count: String(count) } },
        h('span', { className: 'tag', text: label }),
        h('span', { className: 'served-bar-track' }, h('span', { className: 'served-bar-fill', style: { width: `${(100 * count) / total}%`, display: 'block' } })),
        h('span', { className: 'count', text: String(count) }),
      ),
    );
  }
  return rows;
}

export function countByServer(resources: readonly ServedResourceView[]): Map<ServerId, number> {
  const counts = new Map<ServerId, number>();
  for (const resource of resources) {
    if (resource.server !== undefined) counts.set(resource.server, (counts.get(resource.server) ?? 0) + 1);
  }
  return counts;
}

export function resourceItem(resource: ServedResourceView, palette: Palette): HTMLLIElement {
  const tags: HTMLElement[] = [];
  for (const failed of resource.failedServers) {
    tags.push(h('span', { className: 'tag', text: `✕ ${palette.labelOf(failed)}`, style: { '--replica-color': 'var(--bad)' }, attrs: { title: `${hostOf(failed)} failed first` } }));
  }
  if (resource.server !== undefined) {
    tags.push(h('span', { className: 'tag', text: palette.labelOf(resource.server), style: { '--replica-color': palette.colorOf(resource.server) } }));
  } else {
    tags.push(h('span', { className: 'tag', text: resource.passThrough ? 'not bound' : 'not delivered' }));
  }
  return h(
    'li',
    { dataset: { server: resource.server ?? '' } },
    h('span', { className: 'path', text: shortUrl(resource.url), attrs: { title: resource.url } }),
    h('span', {}, ...tags),
  );
}

// ------------------------------------------------------------------ events

export function eventItem(event: TimelineEventView, palette: Palette): HTMLLIElement {
  return h(
    'li',
    { dataset: { kind: event.kind, server: event.server ?? '' } },
    h('span', { className: 'event-time', text: formatClock(event.atMs) }),
    h('span', { className: 'event-kind', text: event.kind, dataset: { kind: event.kind } }),
    h(
      'span',
      { className: 'event-detail' },
      event.server ? h('span', { className: 'tag', text: palette.labelOf(event.server), style: { '--replica-color': palette.colorOf(event.server) } }) : null,
      event.server ? ' ' : null,
      event.detail,
    ),
  );
}
