/**
 * Options of batch transmission on the origin (docs/batching.md, "Origin options"), each
 * defined once with its default and description. The types, the validation with defaults,
 * the `--batch-*` flags of webpp-origin and the table in docs/batching.md derive from it.
 */
import { Type, type Static } from 'typebox';
import { WEBPP_ERR_BAD_OPTIONS } from '../errors.js';
import { compileOptions, optionPath, type PathNamer } from '../options/compile-options.js';
import { defaulted, type Resolved } from '../options/resolved.js';

const MiB = 1024 * 1024;
const group = 'Batch transmission' as const;

export const batchOptionsSchema = Type.Object(
  {
    enabled: defaulted(
      Type.Boolean({ default: true, description: 'Answer batch requests at all (`batch: true` and any options object turn it on).' }),
    ),
    maxParts: defaulted(
      Type.Integer({ minimum: 0, maximum: 1000, default: 100, description: 'Most embedded resources sent in one batch; the rest are left to the client.', cli: { group } }),
    ),
    maxPartBytes: defaulted(
      Type.Integer({ minimum: 0, default: 1 * MiB, description: 'Resources larger than this are left out of batches (the client fetches them).', cli: { group } }),
    ),
    maxBatchBytes: defaulted(
      Type.Integer({ minimum: 0, default: 16 * MiB, description: 'Stop adding resources once this many body bytes were sent (the rest are listed as `missing`).', cli: { group } }),
    ),
    maxPageBytes: defaulted(Type.Integer({ minimum: 0, default: 5 * MiB, description: 'Pages larger than this are never batched.', cli: { group } })),
    concurrency: defaulted(Type.Integer({ minimum: 1, maximum: 64, default: 6, description: 'Embedded resources read at the same time.', cli: { group } })),
    compression: defaulted(
      Type.Enum(['auto', 'never', 'always'], {
        default: 'auto',
        description: "`'auto'` compresses when the batch holds enough compressible bytes; `'never'`; `'always'` when the client accepts it.",
        cli: { group, arg: 'mode' },
      }),
    ),
    minCompressibleBytes: defaulted(
      Type.Integer({ minimum: 0, default: 1024, description: "`'auto'` compresses only when at least this many compressible bytes are in the batch.", cli: { group } }),
    ),
    minCompressibleShare: defaulted(
      Type.Number({
        minimum: 0,
        maximum: 1,
        default: 0.25,
        description:
          "`'auto'` compresses only when compressible bytes (text, JSON, SVG…) are at least this share of the batch: compressing JPEG, PNG or WOFF2 costs CPU and saves nothing.",
        cli: { group, arg: 'share' },
      }),
    ),
    maxDigestBytes: defaulted(
      Type.Integer({ minimum: 0, default: 16 * 1024, description: 'Longest cache digest header accepted; a longer one is ignored (everything is sent).', cli: { group } }),
    ),
  },
  { additionalProperties: false },
);

export type BatchOptions = Static<typeof batchOptionsSchema>;
export type ResolvedBatchOptions = Resolved<typeof batchOptionsSchema>;

const validator = compileOptions<ResolvedBatchOptions>(batchOptionsSchema);

/** true or undefined: the defaults; false: off; an object: checked, defaults filled in. Throws WEBPP_ERR_BAD_OPTIONS naming the option. */
export function resolveBatchOptions(options: BatchOptions | boolean | undefined, name: PathNamer = optionPath('batch')): ResolvedBatchOptions {
  const input = options === undefined || options === true ? {} : options === false ? { enabled: false } : options;
  const checked = validator.check(input, name);
  if (!checked.ok) throw new WEBPP_ERR_BAD_OPTIONS(checked.problems.join('; '));
  return checked.value;
}
