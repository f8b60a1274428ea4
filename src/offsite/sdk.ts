// The AWS SDK's S3 client, loaded at first use: ~40 MiB of a daemon's memory that an install without a
// backup target never needs (bench:idle). `require` keeps the callers synchronous; the SDK ships CommonJS
// beside its ES modules. (lib-storage is no longer used by svc: multipart.ts says why; bench:offsite
// still uploads by hand with it, as the comparison.)
import { createRequire } from 'node:module';
import type * as ClientS3 from '@aws-sdk/client-s3';

const require = createRequire(import.meta.url);
let clientS3: typeof ClientS3 | undefined;

export const s3Sdk = (): typeof ClientS3 => (clientS3 ??= require('@aws-sdk/client-s3') as typeof ClientS3);
