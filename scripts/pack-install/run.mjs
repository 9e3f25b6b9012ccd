// Runs a command with a time limit, for the pack-and-install test: never hangs, and kills
// the whole process group (npm starts children of its own) when the limit is reached.
import { spawn } from 'node:child_process';

/**
 * @param {string} command
 * @param {string[]} args
 * @param {{ cwd: string, timeoutMs: number, env?: NodeJS.ProcessEnv }} options
 * @returns {Promise<{ code: number | null, stdout: string, stderr: string, timedOut: boolean }>}
 */
export function run(command, args, { cwd, timeoutMs, env = process.env }) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, stdout, stderr: `${stderr}${error.message}\n`, timedOut });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut });
    });
  });
}

/**
 * Starts a long-running command (a server) and resolves once a line of its stdout matches
 * `ready`; rejects when it exits first or `timeoutMs` passes. `stop()` ends it.
 */
export function start(command, args, { cwd, timeoutMs, env = process.env, ready }) {
  const child = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise((resolve) => child.once('close', (code) => resolve(code)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) killGroup(child.pid, 'SIGTERM');
    const timer = setTimeout(() => killGroup(child.pid), 5_000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`"${command} ${args.join(' ')}" was not ready within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const onData = (chunk) => {
      output += chunk;
      const match = ready.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ match, output: () => output, stop });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk) => (output += chunk));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`"${command} ${args.join(' ')}" exited with code ${code} before it was ready:\n${output}`));
    });
  });
}

function killGroup(pid, signal = 'SIGKILL') {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}
