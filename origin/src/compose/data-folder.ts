/**
 * The data folder of one server: the given `dataDir`, locked so that one server uses it at a
 * time (directory/data-dir-lock.ts), or a temporary folder removed at close.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { lockDataDir, type DataDirLock } from '../directory/data-dir-lock.js';

export interface DataFolder {
  dataDir: string;
  /** True when dataDir is a temporary folder made for this server (removed at close). */
  temporaryDataDir: boolean;
  log: FastifyBaseLogger;
  dataDirLock: DataDirLock | undefined;
}

export async function openDataFolder(dataDir: string | undefined, log: FastifyBaseLogger): Promise<DataFolder> {
  if (dataDir === undefined) return { dataDir: await mkdtemp(join(tmpdir(), 'webpp-origin-')), temporaryDataDir: true, log, dataDirLock: undefined };
  return { dataDir, temporaryDataDir: false, log, dataDirLock: await lockDataDir(dataDir, log) }; // one server per data folder
}

/** Gives the folder back: a temporary one is removed, a given one unlocked. */
export async function closeDataFolder({ dataDir, temporaryDataDir, dataDirLock }: DataFolder): Promise<void> {
  if (temporaryDataDir) await rm(dataDir, { recursive: true, force: true });
  await dataDirLock?.release();
}
