// The docs ARE the test (issue 23, item 2): the code blocks of the README's "Add it to your
// site" section and of docs/static-hosting.md, extracted from the markdown and run verbatim
// in the pack-and-install test's fresh project. Each fenced block is preceded by a marker
// comment saying what the test does with it:
//   <!-- readme-test: save <file> -->     write the block to <file>
//   <!-- readme-test: install -->         an `npm install` line: the packages it names must be
//                                         exactly installed in the project (from the tarballs)
//   <!-- readme-test: serve -->           each command is a server: started (after the block's
//                                         `export` lines), kept up until the next serve block
//   <!-- readme-test: run -->             each command must exit 0
//   <!-- readme-test: check -->           each command runs while the servers are up; must exit 0
//   <!-- readme-test: served -->          the served page must contain the block
//   <!-- readme-test: bundle <file> -->   write the block to <file>; the test bundles it
//   <!-- readme-test: skip (<reason>) --> not runnable here (another host's configuration)
// A block without a marker is a failure, so a new snippet cannot go untested by accident.
// The only change made to a block: the ports it names (3000, 8081–8083) become free ephemeral
// ports, the same in every block, since other test runs share the machine.
import { readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { run } from './run.mjs';

const MARKER = /^<!--\s*readme-test:\s*(.+?)\s*-->$/;
export const DOC_PORTS = [3000, 8081, 8082, 8083];

/**
 * The fenced blocks of `path` between the heading `from` (exact line; whole file when absent)
 * and the next heading of the same level, with their markers.
 */
export function extractBlocks(path, from) {
  const lines = readFileSync(path, 'utf8').split('\n');
  let start = 0;
  let end = lines.length;
  if (from !== undefined) {
    start = lines.indexOf(from);
    if (start === -1) throw new Error(`${path} has no heading "${from}"`);
    const level = from.match(/^#+/)[0];
    const next = lines.findIndex((line, index) => index > start && new RegExp(`^${level} `).test(line));
    if (next !== -1) end = next;
  }
  const blocks = [];
  for (let index = start; index < end; index++) {
    const open = /^(\s*)```(\w*)\s*$/.exec(lines[index]);
    if (!open) continue;
    const indent = open[1].length;
    const body = [];
    let close = index + 1;
    while (close < end && !/^\s*```\s*$/.test(lines[close])) body.push(lines[close++].slice(indent));
    let previous = index - 1;
    while (previous > start && lines[previous].trim() === '') previous--;
    const marker = MARKER.exec(lines[previous].trim())?.[1];
    blocks.push({ line: index + 1, lang: open[2], code: `${body.join('\n')}\n`, marker });
    index = close;
  }
  return blocks;
}

/** The block with each documented port replaced by its ephemeral stand-in. */
function withPorts(code, ports) {
  return code.replace(new RegExp(`\\b(${DOC_PORTS.join('|')})\\b`, 'g'), (port) => String(ports.get(Number(port))));
}

/** Shell commands of a block: continuation lines joined, comments and blank lines dropped. */
function commandsOf(code) {
  return code
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** Runs an `export …` line once in bash and returns the variables it set. */
async function evaluateExports(line, { cwd, env, timeoutMs }) {
  const result = await run('bash', ['-c', `${line}\nnode -e 'process.stdout.write(JSON.stringify(process.env))'`], { cwd, env, timeoutMs });
  if (result.code !== 0) throw new Error(`"${line}" failed: ${result.stderr}`);
  const after = JSON.parse(result.stdout);
  return Object.fromEntries(Object.entries(after).filter(([name, value]) => env[name] !== value && /^[A-Z_][A-Z0-9_]*$/.test(name)));
}

/** Starts `command` with bash; resolves once its output says it listens. `stop()` kills its group. */
function startServer(command, { cwd, env, timeoutMs, ready = /listening|accepting connections/i }) {
  const child = spawn('bash', ['-c', `exec ${command}`], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise((resolve) => child.once('close', resolve));
  const kill = (signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // gone
    }
  };
  const stop = async () => {
    kill('SIGTERM');
    const timer = setTimeout(() => kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`"${command}" did not say it listens within ${timeoutMs} ms:\n${output.slice(-2000)}`));
    }, timeoutMs);
    const onData = (chunk) => {
      output += chunk;
      if (ready.test(output)) {
        clearTimeout(timer);
        resolve({ stop, output: () => output });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`"${command}" exited (${code}) before it listened:\n${output.slice(-2000)}`));
    });
  });
}

/** The package names of an `npm install` line (versions and flags dropped). */
function installedNames(line) {
  const words = line.split(/\s+/);
  if (words[0] !== 'npm' || !['install', 'i', 'add'].includes(words[1])) throw new Error(`not an npm install line: ${line}`);
  return words.slice(2).filter((word) => !word.startsWith('-')).map((word) => word.replace(/(.)@[^/]*$/, '$1'));
}

/**
 * Runs the blocks of one document in order in `cwd`, as the reader would. `hooks.afterServe(n,
 * env)` checks what the n-th serve block started (its servers are still up) and returns problems;
 * `hooks.bundle(file)` bundles a saved worker; `installed(name)` says whether a package is in the
 * project. Returns the problems, the skipped blocks, and the served snippets to look for.
 */
export async function runDocument({ blocks, cwd, env, ports, hooks, installed, timeoutMs }) {
  const { mkdir, writeFile } = await import('node:fs/promises');
  const { dirname, join } = await import('node:path');
  const problems = [];
  const skipped = [];
  const served = [];
  let servers = [];
  let serveIndex = 0;
  let shellEnv = { ...env };
  const stopServers = async () => {
    await Promise.all(servers.map((server) => server.stop()));
    servers = [];
  };
  // Files first: a snippet may use a file the document saves further down ("the directory
  // file of the next section"), as a reader who read the whole section would have it.
  for (const block of blocks) {
    const [verb, argument] = (block.marker ?? '').split(/\s+/, 2);
    if (verb !== 'save') continue;
    await mkdir(dirname(join(cwd, argument)), { recursive: true });
    await writeFile(join(cwd, argument), withPorts(block.code, ports));
  }
  try {
    for (const block of blocks) {
      const where = `line ${block.line}`;
      if (block.marker === undefined) {
        problems.push(`${where}: a ${block.lang || 'plain'} block without a readme-test marker (say how the test runs it)`);
        continue;
      }
      const [verb, argument] = block.marker.split(/\s+/, 2);
      const code = withPorts(block.code, ports);
      const commands = commandsOf(code);
      const exportsFirst = async () => {
        for (const line of commands.filter((command) => command.startsWith('export '))) shellEnv = { ...shellEnv, ...(await evaluateExports(line, { cwd, env: shellEnv, timeoutMs })) };
        return commands.filter((command) => !command.startsWith('export '));
      };
      if (verb === 'save') continue;
      if (verb === 'bundle') {
        await writeFile(join(cwd, argument), code);
        problems.push(...(await hooks.bundle(argument)).map((problem) => `${where}: ${problem}`));
      } else if (verb === 'install') {
        for (const name of installedNames(commands[0])) if (!installed(name)) problems.push(`${where}: the README says to install ${name}, which the test did not install`);
      } else if (verb === 'served') {
        served.push(code.trim());
      } else if (verb === 'skip') {
        skipped.push(`${where} ${block.marker.slice('skip'.length).trim()}`);
      } else if (verb === 'serve') {
        await stopServers();
        for (const command of await exportsFirst()) {
          try {
            servers.push(await startServer(command, { cwd, env: shellEnv, timeoutMs }));
          } catch (error) {
            problems.push(`${where}: ${error.message}`);
          }
        }
        if (servers.length > 0) problems.push(...(await hooks.afterServe(serveIndex, { env: shellEnv, served })).map((problem) => `${where}: ${problem}`));
        serveIndex += 1;
      } else if (verb === 'run' || verb === 'check') {
        for (const command of await exportsFirst()) {
          const result = await run('bash', ['-c', command], { cwd, env: shellEnv, timeoutMs });
          if (result.code !== 0) problems.push(`${where}: "${command}" ${result.timedOut ? 'timed out' : `exited ${result.code}`}:\n${(result.stdout + result.stderr).slice(-1500)}`);
        }
      } else {
        problems.push(`${where}: unknown readme-test marker "${block.marker}"`);
      }
    }
  } finally {
    await stopServers();
  }
  return { problems, skipped };
}
