// The stacks command with the real Compose loader (src/stacks/compose/load.ts) on YAML: what the four
// services of a plain file become, and a refused key answered with its service and key, nothing written.
import { describe, expect, it } from 'vitest';
import { memoryDb, recordingEnqueue, testSealer } from '../../support/db.js';
import { commandCtx } from '../../support/commands.js';
import { dbRows } from '../../support/db-snapshot.js';
import { createStack, updateStack, type StackCtx } from '../../../src/desired/stacks.js';
import { loadCompose } from '../../../src/stacks/compose/load.js';
import { DomainError } from '../../../src/errors.js';

const YAML = `
services:
  web:
    image: nginx:1.27
    ports: ["18090:80"]
    environment:
      DATABASE_URL: postgres://app:\${DB_PASSWORD}@db/app
    depends_on:
      db: { condition: service_healthy }
      cache: { condition: service_started }
  worker:
    image: nginx:1.27
    command: ["sh", "-c", "sleep infinity"]
    depends_on: [db]
  db:
    image: postgres:16
    environment: { POSTGRES_PASSWORD: "\${DB_PASSWORD:?set it}" }
    volumes: [db-data:/var/lib/postgresql/data]
    healthcheck: { test: ["CMD", "pg_isready"], interval: 2s, retries: 5 }
  cache:
    image: redis:7
volumes:
  db-data: {}
`;

function setup() {
  const db = memoryDb();
  const ctx: StackCtx = { ...commandCtx(db, { enqueue: recordingEnqueue(), sealer: testSealer() }), loadCompose };
  return { db, ctx };
}

describe('stacks command with the Compose loader', () => {
  it('plans a real file: each service an app, dependencies first, the database stops first', () => {
    const { ctx } = setup();
    const { plan, deploy } = createStack(ctx, { name: 'shop', compose: YAML, variables: [{ key: 'DB_PASSWORD', value: 'pw', is_secret: true }] }, 'api');
    expect(plan.ok).toBe(true);
    const order = deploy!.steps.map((s) => s.service);
    expect(order.indexOf('db')).toBeLessThan(order.indexOf('web'));
    expect(order.indexOf('cache')).toBeLessThan(order.indexOf('web'));
    expect(order.indexOf('db')).toBeLessThan(order.indexOf('worker'));
    expect(plan.services.find((s) => s.service === 'db')!.stop_first).toBe(true);
    expect(plan.services.find((s) => s.service === 'web')!.stop_first).toBe(false);
    // The same file again changes nothing it would run (nothing deployed yet: all still to create).
    const again = updateStack(ctx, 1, { compose: YAML }, 'api', { dryRun: true });
    expect(again.plan.services.every((s) => s.action === 'create')).toBe(true);
  });

  it('refuses privileged with a 400 naming the service and key, and writes nothing', () => {
    const { db, ctx } = setup();
    const before = dbRows(db);
    const text = YAML.replace('    image: redis:7', '    image: redis:7\n    privileged: true');
    let err: unknown;
    try {
      createStack(ctx, { name: 'shop', compose: text, variables: [{ key: 'DB_PASSWORD', value: 'pw' }] }, 'api');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).message).toMatch(/^service cache: privileged: /);
    expect(dbRows(db)).toEqual(before);
  });

  it('a required variable left unset is refused naming it', () => {
    const { ctx } = setup();
    expect(() => createStack(ctx, { name: 'shop', compose: YAML }, 'api')).toThrow(/DB_PASSWORD/);
  });
});
