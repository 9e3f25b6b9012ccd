/**
 * Persistence of the replication directory: the whole Yjs state, written crash-safely
 * (writeFileAtomic) whenever it changes. Writes are coalesced: while one write is in
 * flight, further changes are gathered into a single next write. `flush()` resolves once
 * everything changed before the call is on disk, so a handler can acknowledge a change
 * only when it would survive kill -9.
 *
 * File layout (all integers big-endian):
 *   bytes 0..7    magic "WEBPPDIR"
 *   bytes 8..11   format version (1)
 *   bytes 12..15  payload length
 *   bytes 16..47  SHA-256 of the payload
 *   bytes 48..    payload: Y.encodeStateAsUpdate(doc)
 * The checksum guards against damage from outside (disk faults, manual edits); the
 * atomic rename already rules out torn writes.
 */
import { readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { dirname } from 'node:path';
import * as Y from 'yjs';
import { removeStaleTempFiles, writeFileAtomic } from './atomic-file.js';
import { WEBPP_ERR_DIRECTORY_CORRUPT } from '../errors.js';

const MAGIC = Buffer.from('WEBPPDIR', 'ascii');
const FORMAT_VERSION = 1;
const HEADER_BYTES = 48;

export function encodeDirectoryFile(state: Uint8Array): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(header, 0);
  header.writeUInt32BE(FORMAT_VERSION, 8);
  header.writeUInt32BE(state.byteLength, 12);
  createHash('sha256').update(state).digest().copy(header, 16);
  return Buffer.concat([header, state]);
}

/** Returns the Yjs state, or throws WEBPP_ERR_DIRECTORY_CORRUPT. */
export function decodeDirectoryFile(file: Buffer, path: string): Uint8Array {
  if (file.byteLength < HEADER_BYTES || !file.subarray(0, 8).equals(MAGIC)) {
    throw new WEBPP_ERR_DIRECTORY_CORRUPT(path, 'not a webpp directory file (bad magic)');
  }
  const version = file.readUInt32BE(8);
  if (version !== FORMAT_VERSION) throw new WEBPP_ERR_DIRECTORY_CORRUPT(path, `unsupported format version ${version}`);
  const length = file.readUInt32BE(12);
  if (file.byteLength !== HEADER_BYTES + length) {
    throw new WEBPP_ERR_DIRECTORY_CORRUPT(path, `expected ${HEADER_BYTES + length} bytes, found ${file.byteLength}`);
  }
  const payload = file.subarray(HEADER_BYTES);
  const digest = createHash('sha256').update(payload).digest();
  if (!digest.equals(file.subarray(16, 48))) throw new WEBPP_ERR_DIRECTORY_CORRUPT(path, 'checksum mismatch');
  return new Uint8Array(payload);
}

export class DirectoryStore {
  private dirty = false;
  private writing: Promise<void> | undefined;
  private lastError: unknown;
  private detach: (() => void) | undefined;

  constructor(readonly path: string) {}

  /**
   * Loads the persisted state into `doc`. Returns false when there is no file yet (first
   * start). Throws WEBPP_ERR_DIRECTORY_CORRUPT when the file is damaged.
   */
  async load(doc: Y.Doc): Promise<boolean> {
    await removeStaleTempFiles(dirname(this.path));
    let file: Buffer;
    try {
      file = await readFile(this.path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
    const state = decodeDirectoryFile(file, this.path);
    try {
      Y.applyUpdate(doc, state, 'persistence');
    } catch (error) {
      throw new WEBPP_ERR_DIRECTORY_CORRUPT(this.path, `Yjs state does not decode (${(error as Error).message})`);
    }
    return true;
  }

  /** Persists `doc` after every update, until `stop()`. */
  attach(doc: Y.Doc): void {
    const onUpdate = (): void => this.schedule(doc);
    doc.on('update', onUpdate);
    this.detach = () => doc.off('update', onUpdate);
  }

  /** Resolves when every change made before the call is durable; rejects if the write failed. */
  async flush(): Promise<void> {
    while (this.writing !== undefined) await this.writing;
    if (this.lastError !== undefined) {
      const error: unknown = this.lastError;
      this.lastError = undefined;
      throw error;
    }
  }

  /** Writes the current state now (used at start-up and shutdown). */
  async save(doc: Y.Doc): Promise<void> {
    await writeFileAtomic(this.path, encodeDirectoryFile(Y.encodeStateAsUpdate(doc)));
  }

  async stop(): Promise<void> {
    this.detach?.();
    this.detach = undefined;
    await this.flush().catch(() => undefined);
  }

  private schedule(doc: Y.Doc): void {
    this.dirty = true;
    if (this.writing !== undefined) return;
    this.writing = (async () => {
      while (this.dirty) {
        this.dirty = false;
        try {
          await this.save(doc);
          this.lastError = undefined;
        } catch (error) {
          this.lastError = error;
        }
      }
      this.writing = undefined;
    })();
  }
}
