/**
 * TLS credentials from files, reloaded while the server runs. Certificates are renewed
 * (Let's Encrypt every 60–90 days, a private CA more often) and a replica must pick the new
 * ones up without a restart that drops its connections:
 *
 *   - reload() reads both files again and, if they parse and form a pair, swaps them in
 *     with server.setSecureContext(): new handshakes get the new certificate, connections
 *     already open keep theirs;
 *   - a reload that fails (missing file, bad PEM, a key that does not match the certificate)
 *     keeps the old credentials and logs an error: the server goes on serving;
 *   - watch() reads both files every watchIntervalMs and compares their bytes with those
 *     last acted on (the ones read at start, to begin with). Reading by path follows files
 *     replaced by rename or behind a swapped symlink, as certbot and Kubernetes secrets do;
 *     comparing bytes, not stat(), misses no change: not one made between the start and the
 *     first poll, nor one within the file system's timestamp granularity. A change is acted
 *     on once the bytes have stayed the same for SETTLE_MS (a renewal writes two files in
 *     turn), and a broken pair is reported once, not on every poll;
 *   - the CLI also reloads on SIGHUP (cli.ts).
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import { WEBPP_ERR_BAD_OPTIONS, WEBPP_ERR_TLS_CREDENTIALS } from '../errors.js';

export interface TlsFileOptions {
  /** PEM certificate chain file (the server's certificate first). */
  certFile: string;
  /** PEM private key file. */
  keyFile: string;
  /** How often the files are checked for changes; 0 turns watching off. Default 2000. */
  watchIntervalMs?: number;
}

export interface TlsCredentials {
  cert: Buffer;
  key: Buffer;
}

interface ReloadLogger {
  info(object: object, message: string): void;
  error(object: object, message: string): void;
}

/** The part of a TLS server that takes new credentials (https, http2 and tls servers). */
interface SecureContextTarget {
  setSecureContext(options: TlsCredentials): void;
}

const DEFAULT_WATCH_INTERVAL_MS = 2_000;
/** Files unchanged for this long after a change are one renewal (certificate and key written in turn). */
const SETTLE_MS = 300;

/** The longest a Node timer waits; it runs anything else (Infinity, NaN, 2^31) every 1 ms (TimeoutOverflowWarning). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Checks the options a timer will use, before the server binds; throws WEBPP_ERR_BAD_OPTIONS. */
export function checkTlsFileOptions(files: TlsFileOptions): void {
  const intervalMs = files.watchIntervalMs;
  if (intervalMs === undefined || (intervalMs >= 0 && intervalMs <= MAX_TIMER_MS)) return; // false for NaN
  throw new WEBPP_ERR_BAD_OPTIONS(`tls.watchIntervalMs must be 0 (no watching) or a number of ms up to ${MAX_TIMER_MS}, not ${intervalMs}`);
}

/** Checks that a certificate and key parse and form a pair; throws WEBPP_ERR_TLS_CREDENTIALS if not. */
function checkTlsCredentials(files: Pick<TlsFileOptions, 'certFile' | 'keyFile'>, credentials: TlsCredentials): TlsCredentials {
  try {
    // Parses both and checks that the key belongs to the certificate ("key values mismatch").
    createSecureContext(credentials);
  } catch (error) {
    throw new WEBPP_ERR_TLS_CREDENTIALS(`${files.certFile} / ${files.keyFile}: ${(error as Error).message}`);
  }
  return credentials;
}

/** Reads and checks a certificate and key; throws WEBPP_ERR_TLS_CREDENTIALS if they cannot serve. */
export function readTlsCredentials(files: Pick<TlsFileOptions, 'certFile' | 'keyFile'>): TlsCredentials {
  let credentials: TlsCredentials;
  try {
    credentials = { cert: readFileSync(files.certFile), key: readFileSync(files.keyFile) };
  } catch (error) {
    throw new WEBPP_ERR_TLS_CREDENTIALS((error as Error).message);
  }
  return checkTlsCredentials(files, credentials);
}

/** What a poll found: both files' bytes, or why they could not be read. */
type FileState = TlsCredentials | { error: Error };

function sameState(a: FileState | undefined, b: FileState): boolean {
  if (a === undefined) return false;
  if ('error' in a || 'error' in b) return 'error' in a && 'error' in b && a.error.message === b.error.message;
  return a.cert.equals(b.cert) && a.key.equals(b.key);
}

export class TlsReloader {
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  /** The files' state last acted on: loaded, or reported as broken. */
  private actedOn: FileState;
  /** A state seen to differ from actedOn, and since when (waiting for the writes to settle). */
  private pending: { state: FileState; sinceMs: number } | undefined;

  constructor(
    private readonly server: SecureContextTarget,
    private readonly files: TlsFileOptions,
    private readonly log: ReloadLogger,
    /** The credentials the server was started with. */
    initial: TlsCredentials,
  ) {
    this.actedOn = initial;
  }

  /** Reads the files again; true when the server now uses them, false when it kept the old ones. */
  reload(reason: string): boolean {
    let credentials: TlsCredentials;
    try {
      credentials = { cert: readFileSync(this.files.certFile), key: readFileSync(this.files.keyFile) };
    } catch (error) {
      return this.apply({ error: new WEBPP_ERR_TLS_CREDENTIALS((error as Error).message) }, reason);
    }
    return this.apply(credentials, reason);
  }

  /** Reloads when either file changes (no-op when watchIntervalMs is 0). */
  watch(): void {
    const intervalMs = this.files.watchIntervalMs ?? DEFAULT_WATCH_INTERVAL_MS;
    if (intervalMs <= 0 || this.timer !== undefined) return;
    this.timer = setInterval(() => void this.poll(), intervalMs);
    this.timer.unref();
  }

  close(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  private apply(state: FileState, reason: string): boolean {
    this.actedOn = state;
    this.pending = undefined;
    try {
      if ('error' in state) throw state.error;
      this.server.setSecureContext(checkTlsCredentials(this.files, state));
    } catch (error) {
      this.log.error({ err: error, reason, certFile: this.files.certFile, keyFile: this.files.keyFile }, 'TLS reload failed: keeping the previous certificate');
      return false;
    }
    this.log.info({ reason, certFile: this.files.certFile }, 'TLS certificate reloaded');
    return true;
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    let state: FileState;
    try {
      state = { cert: await readFile(this.files.certFile), key: await readFile(this.files.keyFile) };
    } catch (error) {
      state = { error: new WEBPP_ERR_TLS_CREDENTIALS((error as Error).message) };
    } finally {
      this.polling = false;
    }
    if (this.timer === undefined) return; // closed while reading
    const nowMs = Date.now();
    if (sameState(this.actedOn, state)) {
      this.pending = undefined;
    } else if (!sameState(this.pending?.state, state)) {
      this.pending = { state, sinceMs: nowMs };
    } else if (nowMs - (this.pending?.sinceMs ?? nowMs) >= SETTLE_MS) {
      this.apply(state, 'file changed');
    }
  }
}
