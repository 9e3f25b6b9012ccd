/**
 * The demo dashboard (site/dashboard.html): polls the webpp Service Worker's state once a
 * second (and at once when the worker broadcasts an event), polls the launcher's control
 * endpoint for the replica servers, and redraws every panel.
 */
import type { ServerId } from '@webpp/core';
import { ControlClient, readControlAccess, type ReplicaAction } from './control-client.js';
import { byId, h } from './dom.js';
import { hostOf } from './format.js';
import { attributeLoad, collectLoadedUrls, type GalleryLoad } from './gallery-load.js';
import { LatencyHistory } from './history.js';
import { renderLatencyChart } from './latency-chart.js';
import { REPLICA_COLORS, type MachineLoadView, type ReplicaView, type ServedResourceView } from './model.js';
import { Timeline, toTimelineEvent } from './timeline.js';
import { latencyColumns } from './latency-columns.js';
import { countByServer, eventItem, latencyRow, replicaCard, resourceItem, servedBars, type Palette } from './views.js';
import { WorkerClient, type WorkerStateSnapshot } from './worker-client.js';

const POLL_INTERVAL_MS = 1000;
const CHART_MAX_WINDOW_MS = 5 * 60_000;
const GALLERY_PATH = '/';

const elements = {
  workerStatus: byId('worker-status'),
  controlStatus: byId('control-status'),
  replicaCards: byId('replica-cards'),
  latencyRows: byId('latency-rows'),
  sPercentileHeading: byId('s-percentile-heading'),
  tableNote: byId('table-note'),
  chart: byId('latency-chart'),
  legend: byId('chart-legend'),
  reloadGallery: byId<HTMLButtonElement>('reload-gallery'),
  galleryFrame: byId<HTMLIFrameElement>('gallery-frame'),
  loadSummary: byId('load-summary'),
  servedBars: byId('served-bars'),
  resourceList: byId('resource-list'),
  eventList: byId('event-list'),
};

const history = new LatencyHistory(10 * 60_000);
history.load(sessionStorage, Date.now());
const timeline = new Timeline();
const controlAccess = readControlAccess(location, window.history, sessionStorage);
const control = controlAccess ? new ControlClient(controlAccess) : undefined;

let replicas: ReplicaView[] = [];
let snapshot: WorkerStateSnapshot | undefined;
let galleryLoad: GalleryLoad | undefined;
let galleryLoadStartedAtMs = 0;
/** Whether the worker controlled the dashboard when the last gallery load started. */
let galleryLoadControlled = false;
/** Loads of the preview started again because the worker did not control the one that ended. */
let uncontrolledReloads = 0;
const MAX_UNCONTROLLED_RELOADS = 3;
let refreshQueued = false;

// ------------------------------------------------------------------ names and colours

/** Replica servers are named after the launcher's ids ("A · near"), else by host. */
const palette: Palette = {
  colorOf(server: ServerId): string {
    const index = knownServers().indexOf(server);
    return REPLICA_COLORS[index % REPLICA_COLORS.length] ?? 'var(--muted)';
  },
  labelOf(server: ServerId): string {
    const replica = replicas.find((candidate) => candidate.server === server);
    return replica ? `${replica.id.toUpperCase()} · ${hostOf(server)}` : hostOf(server);
  },
};

function knownServers(): ServerId[] {
  const servers = replicas.map((replica) => replica.server);
  const fromWorker = (snapshot?.servers ?? []).map((row) => row.server).sort();
  for (const server of [...fromWorker, ...history.servers().sort()]) {
    if (!servers.includes(server)) servers.push(server);
  }
  return servers;
}

// ------------------------------------------------------------------ worker state

const worker = new WorkerClient((events) => {
  let added = false;
  for (const event of events) added = timeline.add(toTimelineEvent(event)) || added;
  if (added) renderEvents();
  queueRefresh();
});

function queueRefresh(): void {
  if (refreshQueued) return;
  refreshQueued = true;
  setTimeout(() => {
    refreshQueued = false;
    void refreshWorker();
  }, 150);
}

async function refreshWorker(): Promise<void> {
  const status = await worker.status();
  switch (status.kind) {
    case 'unsupported':
      setPill(elements.workerStatus, 'bad', 'Service workers are not available in this browser');
      return;
    case 'not-controlling':
      setPill(elements.workerStatus, 'warn', 'Service worker: installing (this page is not controlled yet)');
      return;
    case 'unresponsive':
      setPill(elements.workerStatus, 'bad', `Service worker: ${status.message}`);
      return;
    case 'ok':
      break;
  }
  snapshot = status.snapshot;
  const { bindings, enabled, counters } = snapshot;
  setPill(
    elements.workerStatus,
    enabled ? 'ok' : 'bad',
    enabled
      ? `Service worker ${snapshot.version}: ${bindings.count} bindings, ${counters.bound} requests bound`
      : 'Service worker switched off by the site',
  );
  for (const event of snapshot.events) timeline.add(toTimelineEvent(event));
  for (const row of snapshot.servers) {
    if (row.sampleCount === 0) continue;
    history.add(row.server, { atMs: snapshot.nowMs, meanMs: row.meanMs, standardDeviationMs: row.stdDevMs, state: row.state });
  }
  history.save(sessionStorage);
  renderTable();
  renderChart();
  renderEvents();
  renderGalleryLoad();
}

// ------------------------------------------------------------------ control endpoint

/** What the dashboard says when this machine, not a replica, makes the figures slow. */
function machineBottleneckText(machine: MachineLoadView): string {
  return (
    `This machine is the bottleneck: the emulator's timers run ${machine.timerLagP95Ms} ms late (95th percentile over ${Math.round(machine.windowMs / 1000)} s; ` +
    `load average ${machine.loadAverage} on ${machine.cores} cores), so every replica looks slower and less steady than its link.`
  );
}

async function refreshReplicas(): Promise<void> {
  if (!control) {
    setPill(elements.controlStatus, 'muted', 'Demo control: open the dashboard link printed by npm start');
    renderReplicas();
    return;
  }
  try {
    replicas = await control.replicas(AbortSignal.timeout(2000));
    const running = `Demo control: ${replicas.filter((replica) => replica.running).length} of ${replicas.length} replicas running`;
    const machine = control.machine;
    // The machine as the bottleneck (cluster/machine-load.ts): say it, or the latencies contradict the README.
    if (machine?.overloaded === true) setPill(elements.controlStatus, 'warn', `${running}. ${machineBottleneckText(machine)}`);
    else setPill(elements.controlStatus, 'ok', running);
  } catch (error) {
    setPill(elements.controlStatus, 'bad', `Demo control unreachable: ${error instanceof Error ? error.message : String(error)}`);
  }
  renderReplicas();
}

async function onReplicaAction(replica: ReplicaView, action: ReplicaAction): Promise<void> {
  if (!control) return;
  const verb = { stop: 'stopped', start: 'restarted', slow: 'slowed down', restore: 'restored to full speed' }[action];
  for (const button of elements.replicaCards.querySelectorAll<HTMLButtonElement>('button')) button.disabled = true;
  try {
    const updated = await control.act(replica.id, action);
    replicas = replicas.map((candidate) => (candidate.id === updated.id ? updated : candidate));
    timeline.add({ id: `${Date.now()}|control|${replica.id}|${action}`, atMs: Date.now(), kind: 'control', server: replica.server, detail: `${verb} from this dashboard` });
  } catch (error) {
    timeline.add({ id: `${Date.now()}|control-error|${replica.id}`, atMs: Date.now(), kind: 'error', server: replica.server, detail: `could not ${action}: ${error instanceof Error ? error.message : String(error)}` });
  }
  renderEvents();
  await refreshReplicas();
}

// ------------------------------------------------------------------ gallery preview

function reloadGallery(): void {
  galleryLoadStartedAtMs = Date.now();
  galleryLoadControlled = Boolean(navigator.serviceWorker?.controller);
  elements.loadSummary.textContent = 'Loading the gallery…';
  elements.reloadGallery.disabled = true;
  // Set src again rather than reload(): while the frame's first navigation is still in flight
  // it holds about:blank, and reload() would abort that navigation and reload about:blank
  // for good. Setting src (even to the same URL) starts a fresh navigation to the gallery,
  // one the worker now controls. The URL stays the logical one, so the worker binds it.
  elements.galleryFrame.setAttribute('src', GALLERY_PATH);
}

elements.galleryFrame.addEventListener('load', () => {
  elements.reloadGallery.disabled = false;
  // On a busy machine the worker can take over while the preview's navigation is in flight,
  // and that load ends without the worker: once the dashboard is controlled, load it again
  // (a few times at most), so that the preview shows a bound load.
  const frameWindow = elements.galleryFrame.contentWindow;
  const frameControlled = Boolean(frameWindow?.navigator.serviceWorker?.controller);
  if (navigator.serviceWorker?.controller && !frameControlled && uncontrolledReloads < MAX_UNCONTROLLED_RELOADS) {
    uncontrolledReloads += 1;
    reloadGallery();
    return;
  }
  let urls: string[];
  try {
    urls = collectLoadedUrls(elements.galleryFrame);
  } catch {
    elements.loadSummary.textContent = 'The gallery frame could not be read.';
    return;
  }
  galleryLoad = { startedAtMs: galleryLoadStartedAtMs || Date.now(), finishedAtMs: Date.now(), urls };
  // The worker records a decision when it hands the response over; ask for them now.
  void refreshWorker();
});

function renderGalleryLoad(): void {
  if (!galleryLoad || !snapshot) return;
  const resources: ServedResourceView[] = attributeLoad(galleryLoad, snapshot.decisions);
  const failovers = resources.filter((resource) => resource.failedServers.length > 0).length;
  const counts = countByServer(resources);
  const busiest = [...counts.entries()].sort((a, b) => b[1] - a[1])[0];
  elements.loadSummary.textContent =
    `${resources.length} resources at ${new Date(galleryLoad.finishedAtMs).toLocaleTimeString()}` +
    (busiest ? `; most from ${palette.labelOf(busiest[0])}` : '') +
    (failovers > 0 ? `; ${failovers} needed a failover` : '') +
    '.';
  elements.servedBars.replaceChildren(...servedBars(resources, knownServers(), palette));
  elements.resourceList.replaceChildren(...resources.map((resource) => resourceItem(resource, palette)));
}

// ------------------------------------------------------------------ panels

function renderReplicas(): void {
  if (replicas.length === 0) {
    elements.replicaCards.replaceChildren(
      h('p', { className: 'panel-note', text: control ? 'Waiting for the launcher…' : 'Replica controls need the dashboard link printed by npm start (it carries the control token).' }),
    );
    return;
  }
  elements.replicaCards.replaceChildren(...replicas.map((replica) => replicaCard(replica, palette, control !== undefined, (target, action) => void onReplicaAction(target, action))));
}

function renderTable(): void {
  if (!snapshot) return;
  const { config } = snapshot;
  const columns = latencyColumns(snapshot);
  elements.sPercentileHeading.textContent = columns.estimateHeading;
  elements.tableNote.textContent = columns.note;
  const order = knownServers();
  const rows = [...snapshot.servers].sort((a, b) => order.indexOf(a.server) - order.indexOf(b.server));
  if (rows.length === 0) return;
  const candidates = rows.filter((row) => row.state === 'available' && row.sPercentileMs !== null);
  const best = candidates.sort((a, b) => (a.sPercentileMs ?? Infinity) - (b.sPercentileMs ?? Infinity))[0]?.server;
  elements.latencyRows.replaceChildren(...rows.map((row) => latencyRow(row, palette, row.server === best, config.selectPercentile, columns.paperTable)));
}

function renderChart(): void {
  renderLatencyChart(elements.chart, history, Date.now(), { maxWindowMs: CHART_MAX_WINDOW_MS, colorOf: palette.colorOf.bind(palette), labelOf: palette.labelOf.bind(palette) });
  elements.legend.replaceChildren(
    ...history.servers().map((server) =>
      h('span', { style: { '--replica-color': palette.colorOf(server) } }, h('span', { className: 'swatch' }), palette.labelOf(server)),
    ),
  );
}

function renderEvents(): void {
  const events = timeline.newestFirst();
  if (events.length === 0) return;
  elements.eventList.replaceChildren(...events.slice(0, 100).map((event) => eventItem(event, palette)));
}

function setPill(element: HTMLElement, tone: 'ok' | 'bad' | 'warn' | 'muted', text: string): void {
  element.dataset.tone = tone;
  element.textContent = text;
}

// ------------------------------------------------------------------ start

elements.reloadGallery.addEventListener('click', reloadGallery);
navigator.serviceWorker?.addEventListener('controllerchange', () => {
  // The first visit loaded the preview before the worker took over: load it again, bound.
  if (!galleryLoadControlled) reloadGallery();
  void refreshWorker();
});
new ResizeObserver(() => renderChart()).observe(elements.chart);

async function tick(): Promise<void> {
  await Promise.all([refreshReplicas(), refreshWorker()]);
  setTimeout(() => void tick(), POLL_INTERVAL_MS);
}

renderChart();
void tick();
reloadGallery();
