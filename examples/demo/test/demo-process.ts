/**
 * Runs the demo launcher (examples/demo/src/cli.ts) as a child process, the way `npm start`
 * does, on ephemeral ports, and reads the URLs it prints. For the Playwright tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export interface DemoProcess {
  galleryUrl: string;
  dashboardUrl: string;
  /** Everything the launcher printed so far. */
  output(): string;
  /** Sends SIGINT (Ctrl-C) and resolves with the exit code; bounded. */
  interrupt(timeoutMs?: number): Promise<number | null>;
  /** Kills the process if it is still running. */
  kill(): Promise<void>;
}

export async function startDemoProcess(extraArgs: string[] = [], startTimeoutMs = 60_000): Promise<DemoProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', CLI, '--ports', '0,0,0', '--control-port', '0', ...extraArgs], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const urls = await new Promise<{ galleryUrl: string; dashboardUrl: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the demo did not start within ${startTimeoutMs} ms:\n${output}`)), startTimeoutMs);
    const check = (): void => {
      const gallery = /Open the gallery:\s+(\S+)/.exec(output)?.[1];
      const dashboard = /Open the dashboard:\s+(\S+)/.exec(output)?.[1];
      if (gallery && dashboard) {
        clearTimeout(timer);
        resolve({ galleryUrl: gallery, dashboardUrl: dashboard });
      }
    };
    child.stdout?.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the demo exited with code ${code} before starting:\n${output}`));
    });
  });

  const waitForExit = async (timeoutMs: number): Promise<number | null | 'timeout'> =>
    Promise.race([exited, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), timeoutMs).unref())]);

  return {
    ...urls,
    output: () => output,
    async interrupt(timeoutMs = 15_000) {
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGINT');
      const code = await waitForExit(timeoutMs);
      if (code === 'timeout') throw new Error(`the demo did not stop within ${timeoutMs} ms of SIGINT:\n${output}`);
      return code;
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await waitForExit(5_000);
    },
  };
}
