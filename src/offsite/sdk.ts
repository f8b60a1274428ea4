// The AWS SDK, loaded at first use: its two packages are ~40 MiB of a daemon's memory that an install
// without a backup target never needs (bench:idle). `require` keeps the callers synchronous; the SDK
// ships CommonJS beside its ES modules.
import { createRequire } from 'node:module';
import type * as ClientS3 from '@aws-sdk/client-s3';
import type * as LibStorage from '@aws-sdk/lib-storage';

const require = createRequire(import.meta.url);
let clientS3: typeof ClientS3 | undefined;
let libStorage: typeof LibStorage | undefined;

export const s3Sdk = (): typeof ClientS3 => (clientS3 ??= require('@aws-sdk/client-s3') as typeof ClientS3);
export const storageSdk = (): typeof LibStorage => (libStorage ??= require('@aws-sdk/lib-storage') as typeof LibStorage);
