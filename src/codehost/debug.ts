// GET /api/codehost/debug (SPEC.md 4.7): whether the app is configured, whether its key is readable, how
// many installations the platform returns and whether each can list its repositories. Reports for real
// (every answer comes from a call made now); errors are reported as text, never a secret.
import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { CodehostClient } from './client.js';
import type { CredentialsHolder } from './credentials.js';

export interface Diagnosis {
  app_configured: boolean;
  private_key_readable: boolean;
  installations: number;
  repositories: { installation_id: number; ok: boolean; count: number; error: string | null }[];
  error?: string;
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

export async function codehostDiagnosis(creds: CredentialsHolder, client: CodehostClient): Promise<Diagnosis> {
  const { appId, privateKeyPath } = creds.get();
  const out: Diagnosis = { app_configured: Boolean(appId && privateKeyPath), private_key_readable: false, installations: 0, repositories: [] };
  if (privateKeyPath) {
    try {
      createPrivateKey(readFileSync(privateKeyPath, 'utf8'));
      out.private_key_readable = true;
    } catch {
      out.private_key_readable = false;
    }
  }
  if (!out.app_configured || !out.private_key_readable) return out;
  let installations: { id: number }[];
  try {
    installations = await client.listInstallations();
  } catch (err) {
    return { ...out, error: message(err) };
  }
  out.installations = installations.length;
  for (const i of installations) {
    try {
      const { total_count } = await client.listRepositories(i.id);
      out.repositories.push({ installation_id: i.id, ok: true, count: total_count, error: null });
    } catch (err) {
      out.repositories.push({ installation_id: i.id, ok: false, count: 0, error: message(err) });
    }
  }
  return out;
}
