/** Version of @webpp/sw, reported in the worker's state. Keep in step with sw/package.json. */
export const SW_VERSION = '0.1.0';
