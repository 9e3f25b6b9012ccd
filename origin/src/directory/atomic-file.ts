/**
 * Crash-safe file replacement: write a temporary file in the same folder, fsync it,
 * rename it over the target, then fsync the folder so that the rename itself is durable.
 * After a crash at any moment (kill -9, power loss) the target holds either the old or the
 * new content in full, never a mix. Leftover temporary files are removed at start-up.
 */
import { open, rename, unlink, readdir, mkdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';

const TEMP_MARKER = '.webpp-tmp-';

export async function writeFileAtomic(path: string, data: Uint8Array | string): Promise<void> {
  const folder = dirname(path);
  await mkdir(folder, { recursive: true });
  const tempPath = join(folder, `${basename(path)}${TEMP_MARKER}${process.pid}-${randomBytes(6).toString('hex')}`);
  const handle = await open(tempPath, 'w', 0o644);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => undefined);
    await unlink(tempPath).catch(() => undefined);
    throw error;
  }
  await handle.close();
  try {
    await rename(tempPath, path);
  } catch (error) {
    await unlink(tempPath).catch(() => undefined);
    throw error;
  }
  await syncFolder(folder);
}

/** fsync a folder so that entries created or renamed in it survive a crash. */
export async function syncFolder(folder: string): Promise<void> {
  let handle;
  try {
    handle = await open(folder, 'r');
    await handle.sync();
  } catch {
    // Some platforms (and some file systems) refuse fsync on folders; the rename is still atomic.
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/** Deletes temporary files left behind by writes that a crash interrupted. */
export async function removeStaleTempFiles(folder: string): Promise<number> {
  let names: string[];
  try {
    names = await readdir(folder);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    if (!name.includes(TEMP_MARKER)) continue;
    await unlink(join(folder, name)).catch(() => undefined);
    removed += 1;
  }
  return removed;
}
