/** Number and time formatting for the dashboard: every figure carries its unit. */

export function formatMs(valueMs: number | undefined): string {
  if (valueMs === undefined || !Number.isFinite(valueMs)) return '—';
  if (valueMs >= 10_000) return `${(valueMs / 1000).toFixed(1)} s`;
  if (valueMs >= 1000) return `${(valueMs / 1000).toFixed(2)} s`;
  if (valueMs >= 100) return `${valueMs.toFixed(0)} ms`;
  return `${valueMs.toFixed(1)} ms`;
}

/** "3 s ago", "2 min ago"; "—" for never. */
export function formatAge(ageMs: number | undefined): string {
  if (ageMs === undefined || !Number.isFinite(ageMs)) return '—';
  if (ageMs < 1000) return 'just now';
  return `${formatDuration(ageMs)} ago`;
}

/** "in 4 s"; "due" when the time has come. */
export function formatDueIn(dueInMs: number): string {
  if (dueInMs <= 0) return 'due now';
  return `in ${formatDuration(dueInMs)}`;
}

function formatDuration(durationMs: number): string {
  const seconds = Math.round(durationMs / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.round(hours / 24)} days`;
}

export function formatClock(atMs: number): string {
  const date = new Date(atMs);
  const pad = (value: number): string => String(value).padStart(2, '0');
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/** The path and query of a URL, for compact lists; the URL itself when it cannot be parsed. */
export function shortUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.pathname}${parsed.search}`;
  } catch {
    return url;
  }
}

/** "a.localhost:8081" for "http://a.localhost:8081". */
export function hostOf(server: string): string {
  try {
    return new URL(server).host;
  } catch {
    return server;
  }
}
