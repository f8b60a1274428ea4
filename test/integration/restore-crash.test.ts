// A restore is a persisted operation (API.md "Backups"): a daemon killed (SIGKILL) in the middle of one
// finishes it after its restart, or undoes it and runs it again, and loses nothing: the service data is the
// archive's afterwards and the safety backup of the state before it is there. Real engine, real Postgres
// stand-in, the daemon as its own process.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemonProcess, type DaemonProcess } from '../support/daemon-process.js';
import { ensureServiceImages, SERVICE_TEST_IMAGES } from '../support/service-images.js';
import { waitFor } from '../support/wait.js';

const run = promisify(execFile);
let p: DaemonProcess | undefined;

beforeAll(async () => {
  await ensureServiceImages();
  p = await startDaemonProcess('rscrash', { SVC_IMAGE_POSTGRES: SERVICE_TEST_IMAGES.postgres });
});
afterAll(async () => {
  await p?.close();
});

async function psql(id: number, name: string, statement: string): Promise<string> {
  const c = (await p!.api('GET', `/api/services/${id}/credentials`)).body;
  const { stdout } = await run('docker', ['exec', '-e', `PGPASSWORD=${c.password}`, `${p!.instance()}-svc-${name}`, 'psql', '-h', '127.0.0.1', '-U', c.user, '-d', c.database, '-v', 'ON_ERROR_STOP=1', '-tA', '-c', statement]);
  return stdout.trim();
}

describe('restore across a crash', () => {
  it('a daemon killed mid-restore finishes (or undoes and redoes) it after its restart; nothing is lost', async () => {
    const d = p!;
    const svc = await d.api('POST', '/api/services', { name: 'rc-pg', type: 'postgres' });
    expect(svc.status).toBe(201);
    const id = svc.body.id as number;
    await waitFor(async () => (await d.api('GET', `/api/services/${id}`)).body.status === 'active', { timeoutMs: 120_000, what: 'service active' });
    await waitFor(() => psql(id, 'rc-pg', 'SELECT 1').then(() => true, () => false), { timeoutMs: 60_000, what: 'postgres answers' });
    await psql(id, 'rc-pg', "CREATE TABLE notes (id int PRIMARY KEY, body text); INSERT INTO notes VALUES (1, 'before')");
    const backup = await d.api('POST', '/api/backups');
    expect(backup.status, JSON.stringify(backup.body)).toBe(201);
    await psql(id, 'rc-pg', "INSERT INTO notes VALUES (2, 'after')");

    const res = await d.api('POST', `/api/backups/${backup.body.id}/restore?wait=false`);
    expect(res.status).toBe(202);
    // Kill as soon as the restore is past its checks: in its safety backup or its swap.
    const phase = await waitFor(async () => {
      const r = (await d.api('GET', `/api/restores/${res.body.id}`)).body;
      return ['safety_backup', 'swapping', 'committed', 'completed'].includes(r.phase) ? (r.phase as string) : undefined;
    }, { timeoutMs: 60_000, intervalMs: 5, what: 'restore under way' });
    await d.kill();
    expect(['safety_backup', 'swapping'], `killed at ${phase}`).toContain(phase);

    await d.start();
    const op = await waitFor(async () => {
      const r = (await d.api('GET', `/api/restores/${res.body.id}`)).body;
      if (r.phase === 'failed') throw new Error(`restore failed: ${r.error}`);
      return r.phase === 'completed' ? r : undefined;
    }, { timeoutMs: 180_000, what: 'restore completed after the restart' });
    expect(op.attempts).toBeUndefined(); // not part of the API shape
    if (phase === 'swapping') expect(d.output()).toContain('an interrupted restore was rolled back; it runs again');

    // The archive's data is live, the later row is gone; the safety backup of the state before is kept.
    await waitFor(async () => (await d.api('GET', `/api/services/${id}`)).body.status === 'active', { timeoutMs: 120_000, what: 'service active again' });
    const notes = await waitFor(() => psql(id, 'rc-pg', 'SELECT body FROM notes ORDER BY id').catch(() => undefined), { timeoutMs: 60_000, what: 'notes readable' });
    expect(notes.split('\n')).toEqual(['before']);
    const list = (await d.api('GET', '/api/backups')).body as { id: number; status: string; trigger: string; size_bytes: number }[];
    const safety = list.find((b) => b.id === op.safety_backup_id)!;
    expect(safety).toMatchObject({ trigger: 'safety', status: 'completed' });
    expect(safety.size_bytes).toBeGreaterThan(0);
    expect(list.find((b) => b.id === backup.body.id)).toMatchObject({ status: 'completed' });
    // The safety archive can itself be restored: it holds the row written after the first backup.
    const again = await d.api('POST', `/api/backups/${safety.id}/restore?wait=true`);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    await waitFor(async () => (await d.api('GET', `/api/services/${id}`)).body.status === 'active', { timeoutMs: 120_000, what: 'service active after the second restore' });
    const back = await waitFor(() => psql(id, 'rc-pg', 'SELECT body FROM notes ORDER BY id').catch(() => undefined), { timeoutMs: 60_000, what: 'notes readable again' });
    expect(back.split('\n')).toEqual(['before', 'after']);
  });
});
