/**
 * The options startReplicaServer adds to the plugin's, and the ones only the webpp-origin
 * command has, each defined once (see plugin-schema.ts for how they are used).
 */
import { Type } from 'typebox';
import { defaulted } from './resolved.js';

/** Serialisable options of startReplicaServer beside the plugin's (logger and routes are code). */
export const serverOptionsSchema = Type.Object(
  {
    root: Type.Optional(
      Type.String({ minLength: 1, description: 'Folder to serve (static files, `index.html` for folders).', cli: { group: 'Content', arg: 'dir', positional: true } }),
    ),
    proxyUpstream: Type.Optional(
      Type.String({
        pattern: '^https?://[^/]+',
        patternText: 'an http(s) URL',
        description: 'Proxy mode: forward requests to this web server instead of serving a folder. Its HTML and CSS are pre-processed too.',
        cli: { group: 'Content', arg: 'url' },
      }),
    ),
    host: defaulted(Type.String({ minLength: 1, default: '127.0.0.1', description: 'Address to listen on.', cli: { group: 'Network', arg: 'address' } })),
    port: defaulted(
      Type.Integer({
        minimum: 0,
        maximum: 65_535,
        default: 0,
        description: 'Port to listen on (0 = any free port).',
        cli: { group: 'Network', default: 8080, env: 'PORT' },
      }),
    ),
    shutdownDrainMs: defaulted(
      Type.Integer({
        minimum: 0,
        maximum: 600_000,
        default: 5_000,
        description:
          'On SIGTERM / SIGINT / `close()`: how long requests in flight may go on finishing (downloads, uploads) before the server cuts them. 0 cuts them at once.',
        cli: { group: 'Behaviour', arg: 'ms' },
      }),
    ),
    publicHost: Type.Optional(
      Type.String({
        minLength: 1,
        defaultText: '`host`',
        description: 'Host name of the default public URL, e.g. `a.localhost`.',
        cli: { group: 'Network', arg: 'name' },
      }),
    ),
  },
  { additionalProperties: false },
);

/** Options only the command has: the TLS files, secrets read from files, the log level. */
export const cliOnlySchema = Type.Object(
  {
    tlsCert: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'PEM certificate chain: serve HTTPS, with HTTP/2 and HTTP/1.1 (ALPN). Needs --tls-key. Reloaded when the file changes or on SIGHUP; a reload that fails keeps the current certificate.',
        cli: { group: 'HTTPS and HTTP/2', arg: 'file' },
      }),
    ),
    tlsKey: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'PEM private key of --tls-cert. Peers with a private CA: start them with NODE_EXTRA_CA_CERTS=<ca.pem>.',
        cli: { group: 'HTTPS and HTTP/2', arg: 'file' },
      }),
    ),
    adminTokenFile: Type.Optional(
      Type.String({ minLength: 1, description: 'Read the admin token from a file.', cli: { group: 'Credentials', arg: 'file' } }),
    ),
    clusterSecretFile: Type.Optional(
      Type.String({ minLength: 1, description: 'Read the cluster secret from a file.', cli: { group: 'Credentials', arg: 'file' } }),
    ),
    logLevel: defaulted(
      Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
        default: 'info',
        description: 'Level of the JSON log lines (pino) on stdout.',
        cli: { group: 'Behaviour', arg: 'level' },
      }),
    ),
  },
  { additionalProperties: false },
);
