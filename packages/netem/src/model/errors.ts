/** Error codes of @webpp/netem, in the style of Fastify's FST_ERR_* codes. */
export type NetemErrorCode =
  | 'WEBPP_ERR_NETEM_SCENARIO'
  | 'WEBPP_ERR_NETEM_OPTIONS'
  | 'WEBPP_ERR_NETEM_NOT_LOOPBACK'
  | 'WEBPP_ERR_NETEM_LISTEN';

export class NetemError extends Error {
  readonly code: NetemErrorCode;

  constructor(code: NetemErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'NetemError';
    this.code = code;
  }
}
