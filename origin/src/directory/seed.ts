/**
 * Seeding the directory from the directory file (and/or the inline `directory` option).
 *
 * The seed is applied as a difference against the seed applied last time (remembered in
 * <dataDir>/directory-seed.json): entries added to the file are added, entries removed
 * from the file are removed, and every change made at run time (POST, DELETE, peers) to
 * other entries is kept. On a first start everything in the file is added. Applying the
 * same file twice changes nothing, so every server of a cluster can be started with the
 * same file. The record is written only after the directory itself is durable, so a crash
 * in between merely repeats an idempotent step.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic-file.js';
import { directoryPairsFrom, readDirectoryFile, type DirectoryPair } from './directory-file.js';
import type { ReplicationDirectory } from './replication-directory.js';
import type { ResolvedOptions } from '../options.js';
import { reservedPairReason } from '../reserved-paths.js';
import { WEBPP_ERR_DIRECTORY_FILE } from '../errors.js';

const SEED_RECORD_FILE = 'directory-seed.json';

export interface SeedResult {
  changed: boolean;
  added: number;
  removed: number;
}

export async function applySeed(
  directory: ReplicationDirectory,
  options: Pick<ResolvedOptions, 'directoryFile' | 'directory' | 'logicalOrigin' | 'scriptPath' | 'workerPath'>,
  dataDir: string,
  saveDirectory: () => Promise<void>,
): Promise<SeedResult> {
  if (options.directoryFile === undefined && options.directory === undefined) return { changed: false, added: 0, removed: 0 };
  const pairs: DirectoryPair[] = [];
  if (options.directoryFile !== undefined) pairs.push(...(await readDirectoryFile(options.directoryFile, options.logicalOrigin)));
  if (options.directory !== undefined) pairs.push(...directoryPairsFrom(options.directory, options.logicalOrigin, 'options.directory'));
  for (const pair of pairs) {
    const reserved = reservedPairReason(pair, options);
    if (reserved !== undefined) throw new WEBPP_ERR_DIRECTORY_FILE(options.directoryFile ?? 'options.directory', `${reserved.url} is reserved: ${reserved.reason}`);
  }

  const recordPath = join(dataDir, SEED_RECORD_FILE);
  const previous = await readRecord(recordPath);
  const key = (pair: DirectoryPair): string => JSON.stringify(pair);
  const now = new Set(pairs.map(key));
  const before = new Set(previous.map(key));
  const add = pairs.filter((pair) => !before.has(key(pair)) && !directory.has(pair[0], pair[1]));
  const remove = previous.filter((pair) => !now.has(key(pair)) && directory.has(pair[0], pair[1]));
  if (add.length > 0 || remove.length > 0) {
    directory.batch({ add, remove }, 'seed');
    await saveDirectory();
  }
  const unchangedRecord = before.size === now.size && [...now].every((pair) => before.has(pair));
  if (!unchangedRecord) await writeFileAtomic(recordPath, `${JSON.stringify(pairs, null, 1)}\n`);
  return { changed: add.length > 0 || remove.length > 0, added: add.length, removed: remove.length };
}

async function readRecord(path: string): Promise<DirectoryPair[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return [];
  }
  try {
    const json = JSON.parse(text) as unknown;
    if (!Array.isArray(json)) return [];
    return json.filter(
      (pair): pair is DirectoryPair => Array.isArray(pair) && pair.length === 2 && typeof pair[0] === 'string' && typeof pair[1] === 'string',
    );
  } catch {
    return [];
  }
}
