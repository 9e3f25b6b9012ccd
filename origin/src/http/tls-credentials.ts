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
 *   - watch() polls both files (fs.watchFile: stat by path, so it also follows files
 *     replaced by rename or behind a swapped symlink, as certbot and Kubernetes secrets do)
 *     and reloads once the writes have settled (debounced: a renewal writes two files);
 *   - the CLI also reloads on SIGHUP (cli.ts).
 */
import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { WEBPP_ERR_TLS_CREDENTIALS } from '../errors.js';

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
/** Changes closer together than this are one renewal (the certificate and key written in turn). */
const SETTLE_MS = 300;

/** Reads and checks a certificate and key; throws WEBPP_ERR_TLS_CREDENTIALS if they cannot serve. */
export function readTlsCredentials(files: Pick<TlsFileOptions, 'certFile' | 'keyFile'>): TlsCredentials {
  let credentials: TlsCredentials;
  try {
    credentials = { cert: readFileSync(files.certFile), key: readFileSync(files.keyFile) };
  } catch (error) {
    throw new WEBPP_ERR_TLS_CREDENTIALS((error as Error).message);
  }
  try {
    // Parses both and checks that the key belongs to the certificate ("key values mismatch").
    createSecureContext(credentials);
  } catch (error) {
    throw new WEBPP_ERR_TLS_CREDENTIALS(`${files.certFile} / ${files.keyFile}: ${(error as Error).message}`);
  }
  return credentials;
}

export class TlsReloader {
  private timer: NodeJS.Timeout | undefined;
  private watching = false;
  private readonly onChange = (): void => this.schedule();

  constructor(
    private readonly server: SecureContextTarget,
    private readonly files: TlsFileOptions,
    private readonly log: ReloadLogger,
  ) {}

  /** Reads the files again; true when the server now uses them, false when it kept the old ones. */
  reload(reason: string): boolean {
    let credentials: TlsCredentials;
    try {
      credentials = readTlsCredentials(this.files);
    } catch (error) {
      this.log.error({ err: error, reason, certFile: this.files.certFile, keyFile: this.files.keyFile }, 'TLS reload failed: keeping the previous certificate');
      return false;
    }
    this.server.setSecureContext(credentials);
    this.log.info({ reason, certFile: this.files.certFile }, 'TLS certificate reloaded');
    return true;
  }

  /** Reloads when either file changes (no-op when watchIntervalMs is 0). */
  watch(): void {
    const intervalMs = this.files.watchIntervalMs ?? DEFAULT_WATCH_INTERVAL_MS;
    if (intervalMs <= 0 || this.watching) return;
    this.watching = true;
    for (const file of [this.files.certFile, this.files.keyFile]) {
      watchFile(file, { interval: intervalMs, persistent: false }, this.onChange);
    }
  }

  close(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.watching) return;
    this.watching = false;
    for (const file of [this.files.certFile, this.files.keyFile]) unwatchFile(file, this.onChange);
  }

  private schedule(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.reload('file changed');
    }, SETTLE_MS);
    this.timer.unref();
  }
}
