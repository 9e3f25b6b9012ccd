/** Runs the real `webpp-origin` CLI (origin/dist/cli.js) as a child process, for the tests. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ORIGIN_CLI = fileURLToPath(new URL('../../../origin/dist/cli.js', import.meta.url));

export interface CliProcess {
  /** The port the CLI listens on, read from its "webpp-origin listening" log line. */
  readonly port: number;
  output(): string;
  /** SIGTERM, then the exit code (bounded). */
  stop(timeoutMs?: number): Promise<number | null>;
}

export async function startOriginCli(args: string[], env: Record<string, string> = {}, startTimeoutMs = 30_000): Promise<CliProcess> {
  const child: ChildProcess = spawn(process.execPath, [ORIGIN_CLI, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`webpp-origin did not start within ${startTimeoutMs} ms:\n${output}`)), startTimeoutMs);
    const check = (): void => {
      const match = /"listen":"[^"]*:(\d+)"/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    };
    child.stdout?.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`webpp-origin exited with code ${code}:\n${output}`));
    });
  });
  return {
    port,
    output: () => output,
    async stop(timeoutMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const result = await Promise.race([exited, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), timeoutMs).unref())]);
      if (result === 'timeout') {
        child.kill('SIGKILL');
        throw new Error(`webpp-origin did not exit within ${timeoutMs} ms of SIGTERM`);
      }
      return result;
    },
  };
}
