/**
 * Same-run A/B load measurement for the pre-processing benchmark: bench servers in their own
 * processes (bench-server.ts), autocannon against one at a time, and for each measurement
 * the server's and the load generator's CPU time per request. All on 127.0.0.1, bounded by
 * request count (warm-up) or by time (measurement).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const SERVER = fileURLToPath(new URL('./bench-server.ts', import.meta.url));
const READY_TIMEOUT_MS = 60_000;

export interface BenchServer {
  child: ChildProcess;
  port: number;
}

export async function startServer(mode: string, root: string): Promise<BenchServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER, mode, root], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /READY (\d+)/.exec(out);
      if (match !== null) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`${mode} server exited with ${code}`)));
    setTimeout(() => reject(new Error(`${mode} server not ready`)), READY_TIMEOUT_MS).unref();
  });
  return { child, port };
}

async function serverCpuMicros(port: number): Promise<number> {
  const usage = (await (await fetch(`http://127.0.0.1:${port}/__cpu`)).json()) as { user: number; system: number };
  return usage.user + usage.system;
}

export interface LoadResult {
  requestsPerSecond: number;
  /** Server CPU time (user + system) per request: far less sensitive than throughput to other load on the machine. */
  cpuMicrosPerRequest: number;
  /** The load generator's own CPU time per request (it shares the 2 cores with the server). */
  clientCpuMicrosPerRequest: number;
  /** 1-minute load average when the measurement ended. */
  loadAverage: number;
  errors: number;
  non2xx: number;
}

export interface LoadSettings {
  connections: number;
  /** Measure for this long… */
  durationS?: number;
  /** …or send exactly this many requests (warm-up: the JIT gets the same work however slow the machine is). */
  requests?: number;
}

export async function load(port: number, settings: LoadSettings): Promise<LoadResult> {
  const cpuBefore = await serverCpuMicros(port);
  const clientBefore = process.cpuUsage();
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/index.html`,
    connections: settings.connections,
    pipelining: 1,
    ...(settings.requests === undefined ? { duration: settings.durationS ?? 5 } : { amount: settings.requests }),
  });
  const client = process.cpuUsage(clientBefore);
  const cpuMicros = (await serverCpuMicros(port)) - cpuBefore;
  const total = Math.max(1, result.requests.total);
  return {
    requestsPerSecond: result.requests.average,
    cpuMicrosPerRequest: cpuMicros / total,
    clientCpuMicrosPerRequest: (client.user + client.system) / total,
    loadAverage: loadavg()[0] ?? 0,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** Median and range, rounded to `digits` decimals. */
export function spread(values: number[], digits = 0): { median: number; min: number; max: number } {
  const round = (value: number): number => Number(value.toFixed(digits));
  return { median: round(median(values)), min: round(Math.min(...values)), max: round(Math.max(...values)) };
}
