// The "test" action of a target: write a small object, read it back, compare, delete it. Each step that
// fails answers the store's own error and which step it was, so "saved" never stands for "works".
import { randomBytes } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';
import { s3Sdk } from './sdk.js';
import { storeReason } from './s3.js';

export type ProbeResult = { ok: true; key: string; duration_ms: number } | { ok: false; step: 'write' | 'read' | 'compare' | 'delete'; error: string };

export async function probeTarget(client: S3Client, bucket: string, prefix: string, signal?: AbortSignal): Promise<ProbeResult> {
  const started = Date.now();
  const key = `${prefix}.svc-test-${randomBytes(6).toString('hex')}`;
  const body = randomBytes(64).toString('hex');
  let step: 'write' | 'read' | 'compare' | 'delete' = 'write';
  try {
    await client.send(new (s3Sdk().PutObjectCommand)({ Bucket: bucket, Key: key, Body: body, ContentType: 'text/plain' }), { abortSignal: signal });
    step = 'read';
    const got = await client.send(new (s3Sdk().GetObjectCommand)({ Bucket: bucket, Key: key }), { abortSignal: signal });
    const text = await got.Body!.transformToString();
    step = 'delete';
    await client.send(new (s3Sdk().DeleteObjectCommand)({ Bucket: bucket, Key: key }), { abortSignal: signal });
    if (text !== body) return { ok: false, step: 'compare', error: 'the object read back differs from the one written' };
    return { ok: true, key, duration_ms: Date.now() - started };
  } catch (err) {
    if (step === 'read') await client.send(new (s3Sdk().DeleteObjectCommand)({ Bucket: bucket, Key: key })).catch(() => {});
    return { ok: false, step, error: storeReason(err) };
  }
}
