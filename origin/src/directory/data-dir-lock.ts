/**
 * One server per data folder. Two servers sharing one — several `webpp-origin` started in
 * one folder without `--data-dir` all take the default `.webpp-data` — overwrite each
 * other's directory state and replica metadata, and one's start-up removes the blobs the
 * other still serves (its stored replicas then answer 404). So a server holds
 * `<dataDir>/webpp.lock` (its pid and host name) while it runs, and another refuses to
 * start on the folder with WEBPP_ERR_DATA_DIR_IN_USE.
 *
 * A lock left behind by a process that died (kill -9, a power cut) is taken over: its pid
 * is not alive any more on this host, or is this very process (a container restarted with
 * the same pid) but not one of the locks this process holds (two servers started in one
 * process on one folder are refused like two processes). A lock written on another host (a volume moved to a new pod) cannot be
 * checked and is taken over with a warning. The lock file appears with its content in one
 * step (written to a temporary file, then hard-linked into place, which fails if a lock
 * exists), so a server starting at the same moment never reads it half-written.
 */
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { WEBPP_ERR_DATA_DIR_IN_USE } from '../errors.js';

const DATA_DIR_LOCK_FILE = 'webpp.lock';

/** Tokens of the locks the servers of this process hold now. */
const heldTokens = new Set<string>();

interface LockRecord {
  pid: number;
  hostname: string;
  token: string;
}

export interface DataDirLock {
  /** Removes the lock file if it is still this server's. */
  release(): Promise<void>;
}

interface LockLogger {
  warn(object: object, message: string): void;
}

function parseLock(text: string): LockRecord | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockRecord>;
    if (typeof value.pid === 'number' && typeof value.hostname === 'string' && typeof value.token === 'string') return value as LockRecord;
  } catch {
    // unreadable: left by a crash, or not ours
  }
  return undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // alive, owned by another user
  }
}

/** Creates the lock file with its content in one step; false when a lock file exists. */
async function createLock(path: string, record: LockRecord): Promise<boolean> {
  const tempPath = `${path}.${record.token}`;
  await writeFile(tempPath, JSON.stringify(record));
  try {
    await link(tempPath, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(tempPath).catch(() => undefined);
  }
}

/** Takes `<dataDir>/webpp.lock`; throws WEBPP_ERR_DATA_DIR_IN_USE while a live server holds it. */
export async function lockDataDir(dataDir: string, log: LockLogger): Promise<DataDirLock> {
  await mkdir(dataDir, { recursive: true });
  const path = join(dataDir, DATA_DIR_LOCK_FILE);
  const own: LockRecord = { pid: process.pid, hostname: hostname(), token: randomBytes(8).toString('hex') };
  const release = async (): Promise<void> => {
    const held = parseLock(await readFile(path, 'utf8').catch(() => ''));
    if (held?.token === own.token) await unlink(path).catch(() => undefined);
    heldTokens.delete(own.token);
  };
  // Two attempts: the second follows the removal of a stale lock.
  for (let attempt = 0; attempt < 2; attempt += 1) {
    if (await createLock(path, own)) {
      heldTokens.add(own.token);
      return { release };
    }
    const holder = parseLock(await readFile(path, 'utf8').catch(() => ''));
    if (holder !== undefined && holder.hostname === own.hostname && holder.pid === own.pid && heldTokens.has(holder.token)) {
      throw new WEBPP_ERR_DATA_DIR_IN_USE(dataDir, 'another server in this process');
    }
    if (holder !== undefined && holder.hostname === own.hostname && holder.pid !== own.pid && isAlive(holder.pid)) {
      throw new WEBPP_ERR_DATA_DIR_IN_USE(dataDir, `process ${holder.pid}`);
    }
    if (holder !== undefined && holder.hostname !== own.hostname) {
      log.warn({ dataDir, holder }, 'webpp data folder was locked by a server on another host: taking it over');
    }
    await unlink(path).catch(() => undefined);
  }
  throw new WEBPP_ERR_DATA_DIR_IN_USE(dataDir, 'another server starting at the same moment');
}
