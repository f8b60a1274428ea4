// The layout of src/ (docs/architecture.md "The flow", docs/decisions/0001-one-write-path.md): entry points -> commands -> store -> queue -> reconcilers
// -> adapters, read from the real import statements. No two top-level folders import each other (directly
// or around a circle), only the composition root imports the REST adapters, and the lower layers never
// reach up to the edges.
import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { crossImports, cycles, type ImportEdge } from '../support/layout.js';
import { schemaTables, tableWrites, type TableWrite } from '../support/table-writes.js';
import { loopsIn, timerLoops } from '../support/timers.js';

const SRC = join(import.meta.dirname, '../../src');
/** The composition root: the only parts that may import api/ (and that nothing imports back). */
const ROOT = new Set(['main.ts', 'server.ts', 'wiring']);
/** Parts a lower layer must never import: it would make the edges or the reconcilers its dependency. */
const EDGES = ['api', 'ui', 'http', 'wiring', 'main.ts', 'server.ts', 'cli', 'cli.ts'];
const FORBIDDEN: Record<string, string[]> = {
  desired: [...EDGES, 'reconcilers', 'manifests', 'observed', 'presenters'],
  store: [...EDGES, 'desired', 'reconcilers', 'manifests', 'observed', 'presenters'],
  reconcilers: [...EDGES, 'presenters'],
  observed: [...EDGES, 'desired', 'presenters'],
  // The JSON shapes the edges answer with: built from store rows (and the commands' field parsers), used
  // by api/, ui/, cli/ and wiring/; below the edges, above the commands.
  presenters: [...EDGES, 'reconcilers', 'manifests', 'observed'],
};

const show = (edges: ImportEdge[]) => edges.map((e) => `${e.file} imports ${e.specifier}`);

describe('layout of src/', () => {
  const edges = crossImports(SRC);

  it('has no cycle between top-level folders', () => {
    const found = cycles(edges);
    const culprits = found.flatMap((group) => show(edges.filter((e) => group.includes(e.from) && group.includes(e.to))));
    expect(culprits, `folder cycles: ${JSON.stringify(found)}`).toEqual([]);
  });

  it('imports api/ only from the composition root', () => {
    expect(show(edges.filter((e) => e.to === 'api' && !ROOT.has(e.from)))).toEqual([]);
  });

  it('keeps commands, store, observed state and reconcilers below the edges', () => {
    const wrong = edges.filter((e) => FORBIDDEN[e.from]?.includes(e.to));
    expect(show(wrong)).toEqual([]);
  });

  it('the checker sees a cycle and an api/ import where there is one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-layout-'));
    try {
      const file = (path: string, text: string) => {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), text);
      };
      file('api/a.ts', "import { b } from '../ui/b.js';\nexport const a = 1;\n");
      file('ui/b.ts', "import type { a } from '../api/a.js';\nexport const b = 2;\n");
      file('store/c.ts', "export const c = await import('../desired/d.js');\n");
      file('desired/d.ts', "import { c } from '../store/c.js';\n");
      file('main.ts', "import { a } from './api/a.js';\n");
      const e = crossImports(dir);
      expect(cycles(e)).toEqual([['api', 'ui'], ['desired', 'store']]);
      expect(e.filter((x) => x.to === 'api' && !ROOT.has(x.from)).map((x) => x.file)).toEqual(['ui/b.ts']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * Timers that may loop beside the work queue, each with why. Everything else that must come back later is a
 * key of the queue and returns `requeueAfterMs` (issue 31 "No loops beside the queue").
 */
const TIMER_LOOPS_ALLOWED: Record<string, string> = {
  'api/logs.ts': "a log stream's SSE keepalive: lives and ends with one response",
  'api/jobs.ts': "a job run's SSE keepalive: lives and ends with one response",
  'ui/assets/client.ts': "the page's auto-refresh: runs in the browser, not in the daemon",
  'metrics/collector.ts': 'the resource sampler (issue 22), on the Clock port; not yet a queue key (a follow-up)',
};
/** Folders whose timers are the machinery itself: the queue, the manager's resync, the event stream's reconnect. */
const TIMER_FOLDERS_ALLOWED = ['controller/'];

describe('no loops beside the queue', () => {
  it('has no setInterval or self-rescheduling setTimeout outside the queue and the listed files', () => {
    const loops = timerLoops(SRC).filter((l) => !TIMER_FOLDERS_ALLOWED.some((d) => l.file.startsWith(d)) && !(l.file in TIMER_LOOPS_ALLOWED));
    expect(loops.map((l) => `${l.file}:${l.line} ${l.kind}`)).toEqual([]);
  });

  it('lists no file that has no loop any more', () => {
    const files = new Set(timerLoops(SRC).map((l) => l.file));
    expect(Object.keys(TIMER_LOOPS_ALLOWED).filter((f) => !files.has(f))).toEqual([]);
  });

  it('the checker catches an interval and a timer that schedules itself, directly or through a helper; not a bounded wait', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-layout-timers-'));
    try {
      const file = (path: string, text: string) => {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), text);
      };
      file('a/interval.ts', 'export function every() {\n  const t = setInterval(() => {}, 1000);\n  return t;\n}\n');
      file('b/self.ts', 'export const tick = () => {\n  work();\n  timer = clock.setTimeout(tick, 5000);\n};\n');
      file('c/helper.ts', 'function tick() {\n  schedule(250);\n}\nconst schedule = (ms: number) => {\n  timer = setTimeout(tick, ms);\n};\n');
      file('d/waits.ts', [
        '// setInterval(in a comment) is not code',
        'export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));',
        'export function bounded(abort: () => void) {',
        '  const t = setTimeout(abort, 2000);',
        '  return t;',
        '}',
        'function done() {}',
        'export const once = () => setTimeout(done, 10);',
        '',
      ].join('\n'));
      expect(timerLoops(dir).map((l) => `${l.file}:${l.line} ${l.kind}`).sort()).toEqual(['a/interval.ts:2 setInterval', 'b/self.ts:3 setTimeout loop', 'c/helper.ts:5 setTimeout loop']);
      expect(loopsIn('x.ts', 'const s = `setInterval`;')).toEqual([]); // a word, not a call
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * Who may write each table (src/store/schema), read from the source by test/support/table-writes.ts.
 * Desired state (`spec`) is written by the commands (src/desired) only, observed state (`observed`) by
 * src/observed only (the reconcilers call it); `record` tables (runs, logs, queues, sessions) belong to
 * the module that keeps them. `also` names the other writers a kind allows today, each with its reason;
 * a writer is a folder (`desired`) or a file (`store/previews.ts`) of src/. A new table needs a row.
 */
type Rule = { kind: 'spec' | 'observed' | 'record'; also?: Record<string, string> };
const BY_COMMANDS = 'a helper only src/desired calls';
const WRITES: Record<string, Rule> = {
  apps: { kind: 'spec', also: { 'store/services.ts': `bumpConfigVersion, ${BY_COMMANDS}`, 'store/previews.ts': `deletePreviewApps, ${BY_COMMANDS}` } },
  services: {
    kind: 'spec',
    also: {
      'store/previews.ts': `releaseService, ${BY_COMMANDS}`,
      'store/services.ts': 'rebaseServices (derived paths and names re-pointed) and sealMissingGarageKeys (a key for a Garage of an older svc), at start and after a restore (main.ts, backup/restore.ts)',
    },
  },
  service_status: { kind: 'observed' },
  service_upgrades: { kind: 'record', also: { 'store/service-upgrades.ts': 'the upgrade state machine: asked for by the services command, advanced by the service reconciler' } },
  service_copies: { kind: 'record', also: { 'store/service-copies.ts': "a preview's copy of its parent's data: asked for by the previews command, made by the service reconciler" } },
  service_events: { kind: 'record', also: { 'store/service-upgrades.ts': 'events of a service (each step of an upgrade)' } },
  service_backups: { kind: 'record', also: { 'store/service-backups.ts': 'per-service backups and their outcome' } },
  service_backup_uploads: { kind: 'record', also: { 'store/service-backups.ts': 'copies of service backups to the backup targets' } },
  service_restores: { kind: 'record', also: { 'store/service-backups.ts': 'restores of one service' } },
  service_backup_policies: { kind: 'spec' },
  node_specs: { kind: 'spec', also: { 'store/node-specs.ts': `recordNodeChange, ${BY_COMMANDS}` } },
  node_spec_status: { kind: 'observed' },
  service_links: { kind: 'spec', also: { 'store/previews.ts': `releaseService, ${BY_COMMANDS}` } },
  env_vars: { kind: 'spec' },
  env_history: { kind: 'spec' },
  stacks: { kind: 'spec' },
  stack_vars: { kind: 'spec' },
  stack_var_history: { kind: 'spec' },
  previews: { kind: 'spec', also: { 'store/previews.ts': 'setPreviewReport: what svc last said on the pull request (previews/reporter.ts)' } },
  backup_targets: { kind: 'spec' },
  registry_credentials: { kind: 'spec' },
  notify_channels: { kind: 'spec' },
  invitations: { kind: 'spec' },
  users: { kind: 'spec', also: { 'store/teams-fixup.ts': 'a one-time fix-up of rows older than roles, run with the migrations' } },
  recovery_codes: { kind: 'spec', also: { 'auth/totp.ts': 'login uses a recovery code up' } },
  api_tokens: {
    kind: 'spec',
    also: {
      'store/tokens.ts': `createApiToken and deleteApiToken, ${BY_COMMANDS}; last_used_at stamped when a token is used`,
      'store/teams-fixup.ts': 'a one-time fix-up of rows older than scopes, run with the migrations',
    },
  },
  settings: {
    kind: 'spec',
    also: {
      'store/instance.ts': "the instance's id, chosen at the first start",
      'store/encryption-check.ts': 'the sealed check value that proves the key at start',
      'store/codehost.ts': "the code-host manifest flow's single-use state",
    },
  },
  app_status: { kind: 'observed' },
  app_instances: { kind: 'observed' },
  deploys: { kind: 'record', also: { 'store/deploys.ts': 'the deploy state machine: requested by a command, advanced by the app reconciler' } },
  deploy_events: { kind: 'record', also: { 'store/deploys.ts': 'events of a deploy' } },
  app_events: { kind: 'record', also: { 'store/deploys.ts': 'events of an app' } },
  stack_deploys: { kind: 'record', also: { 'store/stacks.ts': 'the stack deploy state machine: queued by the stacks command, advanced by the stack reconciler' } },
  stack_events: { kind: 'record', also: { 'store/stacks.ts': 'events of a stack' } },
  job_runs: { kind: 'record', also: { 'store/jobs.ts': 'runs of scheduled and one-off jobs' } },
  job_ticks: { kind: 'record', also: { 'store/jobs.ts': "the scheduler's last tick per job" } },
  backups: { kind: 'record', also: { 'store/backups.ts': 'backup archives and their outcome' } },
  restores: { kind: 'record', also: { 'store/backup-ops.ts': 'restore runs' } },
  imports: { kind: 'record', also: { 'store/backup-ops.ts': 'import runs' } },
  backup_uploads: { kind: 'record', also: { 'store/offsite.ts': 'uploads to backup targets' } },
  audit_log: { kind: 'record', also: { 'store/audit.ts': 'the audit trail' } },
  sessions: { kind: 'record', also: { 'store/sessions.ts': 'login sessions' } },
  webhook_deliveries: { kind: 'record', also: { 'store/codehost.ts': 'webhook deliveries seen (replay guard)' } },
  codehost_installations: { kind: 'record', also: { 'store/codehost.ts': "the platform's installation events" } },
  manifest_applies: { kind: 'record', also: { 'manifests/record.ts': 'manifest applies and their outcome' } },
  metric_samples: { kind: 'record', also: { 'store/metrics.ts': "the metrics collector's samples" } },
  node_events: { kind: 'record', also: { 'store/node-events.ts': 'Swarm nodes seen going down and coming back' } },
  notify_outbox: { kind: 'record', also: { 'store/notify.ts': 'notifications waiting for delivery', 'notify/raise.ts': 'raising a notification queues it' } },
  notify_deliveries: { kind: 'record', also: { 'store/notify.ts': 'delivery attempts' } },
  notify_alerts: { kind: 'record', also: { 'store/notify.ts': 'the storm rule per alert' } },
  /** Raw SQL whose table is computed. */
  '*': { kind: 'record', also: { 'backup/snapshot.ts': 'restoring a snapshot replaces every table at once' } },
};
const HOME = { spec: ['desired'], observed: ['observed'], record: [] } as const;

/** The writers a rule allows: the kind's home folder and its `also` entries. */
const writersOf = (rule: Rule) => [...HOME[rule.kind], ...Object.keys(rule.also ?? {})];
const isIn = (file: string, writer: string) => file === writer || file.startsWith(writer + '/');
/** The writes `rules` do not allow, as `file:line how table`. */
const forbiddenWrites = (writes: TableWrite[], rules: Record<string, Rule>) =>
  writes
    .filter((w) => !rules[w.table] || !writersOf(rules[w.table]).some((x) => isIn(w.file, x)))
    .map((w) => `${w.file}:${w.line} ${w.how} ${w.table}`);

describe('which folders write which tables', () => {
  const tables = schemaTables(join(SRC, 'store/schema'));
  const writes = tableWrites(SRC, tables);

  it('has a rule for every table and none for a table that is gone', () => {
    const names = [...new Set(tables.values())].sort();
    expect(names.length).toBeGreaterThan(20);
    expect(Object.keys(WRITES).filter((t) => t !== '*').sort()).toEqual(names);
  });

  it('writes desired state from src/desired and observed state from src/observed only', () => {
    expect(writes.length).toBeGreaterThan(50);
    expect(forbiddenWrites(writes, WRITES)).toEqual([]);
  });

  it('names only writers that exist and still write the table', () => {
    const stale = Object.entries(WRITES).flatMap(([table, rule]) =>
      Object.keys(rule.also ?? {})
        .filter((x) => !writes.some((w) => w.table === table && isIn(w.file, x)))
        .map((x) => `${table}: ${x}`),
    );
    expect(stale).toEqual([]);
  });

  it('the checker sees drizzle and raw SQL writes where the rule forbids them', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-writes-'));
    try {
      const file = (path: string, text: string) => {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), text);
      };
      file('store/schema/t.ts', "export const apps = sqliteTable('apps', {});\nexport const appStatus = sqliteTable(\n  'app_status', {});\n");
      file('desired/apps.ts', 'db.insert(apps).values({}).run();\ncache.delete(key);\n');
      file('observed/apps.ts', 'db\n  .update(schema.appStatus)\n  .set({});\n');
      file('reconcilers/app.ts', "db.delete(apps).run();\ndb.$client.prepare('UPDATE app_status SET status = 1').run();\n");
      file('backup/restore.ts', 'c.prepare(`DELETE FROM main.${q(t)}`).run();\n');
      const t = schemaTables(join(dir, 'store/schema'));
      expect([...t]).toEqual([['apps', 'apps'], ['appStatus', 'app_status']]);
      const rules: Record<string, Rule> = { apps: { kind: 'spec' }, app_status: { kind: 'observed' } };
      const found = tableWrites(dir, t);
      expect(found.map((w) => `${w.file} ${w.table}`).sort()).toEqual([
        'backup/restore.ts *',
        'desired/apps.ts apps',
        'observed/apps.ts app_status',
        'reconcilers/app.ts app_status',
        'reconcilers/app.ts apps',
      ]);
      expect(forbiddenWrites(found, rules).sort()).toEqual([
        'backup/restore.ts:1 sql *',
        'reconcilers/app.ts:1 delete apps',
        'reconcilers/app.ts:2 sql app_status',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
