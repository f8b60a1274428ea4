// SQL against a managed Postgres or MySQL service of a test daemon, run inside its container with the
// credentials from the credentials endpoint: lets backup tests write rows and read them back.
import { expect } from 'vitest';
import type { TestDaemon } from './daemon.js';
import { waitFor } from './wait.js';

export interface SqlService {
  id: number;
  name: string;
  run(statement: string): Promise<string>;
  /** `SELECT body FROM notes ORDER BY id` as a list. */
  notes(): Promise<string[]>;
}

/** Creates the service through the API, waits until it is active, and returns a client for it. */
export async function sql(d: TestDaemon, name: string, type: 'postgres' | 'mysql'): Promise<SqlService> {
  const created = await d.api('POST', '/api/services', { name, type });
  expect(created.status).toBe(201);
  const id = created.body.id as number;
  await waitFor(async () => (await d.api('GET', `/api/services/${id}`)).body.status === 'active', { timeoutMs: 120_000 });
  return client(d, id, name, type);
}

/** A client for an existing service (after a restore its credentials may be the archive's). */
export function client(d: TestDaemon, id: number, name: string, type: 'postgres' | 'mysql'): SqlService {
  const container = `${d.instance}-svc-${name}`;
  const run = async (statement: string) => {
    const c = (await d.api('GET', `/api/services/${id}/credentials`)).body;
    const r =
      type === 'postgres'
        ? await d.daemon.runtime.exec(container, ['psql', '-h', '127.0.0.1', '-U', c.user, '-d', c.database, '-v', 'ON_ERROR_STOP=1', '-tA', '-c', statement], { env: { PGPASSWORD: c.password } })
        : await d.daemon.runtime.exec(container, ['mysql', '-h127.0.0.1', `-u${c.user}`, c.database, '-N', '-B', '-e', statement], { env: { MYSQL_PWD: c.password } });
    if (r.exitCode !== 0) throw new Error(`${name}: ${statement}: ${r.stderr}`);
    return r.stdout.trim();
  };
  return {
    id,
    name,
    run,
    notes: async () => (await run('SELECT body FROM notes ORDER BY id')).split('\n').filter(Boolean),
  };
}
