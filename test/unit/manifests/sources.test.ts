// The directory and git sources through the manifests reconciler: real files in a temp directory, a real
// local bare repository (file://), a :memory: database.
import { Bus } from '../../../src/controller/bus.js';
import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../../src/config.js';
import { silentLogger } from '../../../src/log.js';
import { createManifestsReconciler } from '../../../src/reconcilers/manifests/reconciler.js';
import { syncGitCheckout } from '../../../src/manifests/git.js';
import { listSourceRecords } from '../../../src/manifests/record.js';
import { apps, appEvents, services } from '../../../src/store/schema/index.js';
import { memoryDb, recordingEnqueue, testKey, testSealer } from '../../support/db.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'svc-mf-src-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const appYaml = (name: string, port: number, extra = '') => `apiVersion: svc/v1\nkind: App\nmetadata: {name: ${name}}\nspec:\n  fallback_port: ${port}\n${extra}`;

function setup(o: { git?: { url: string; branch?: string; path?: string }; pruneServices?: boolean } = {}) {
  const db = memoryDb();
  const enqueue = recordingEnqueue();
  const dir = join(root, 'manifests');
  const config = parseConfig({ SVC_ENCRYPTION_KEY: testKey.toString('base64'), SVC_DATA_DIR: join(root, 'data') });
  const cloneDir = join(root, 'clone');
  const r = createManifestsReconciler({
    db, sealer: testSealer(), enqueue, bus: new Bus(), now: () => new Date(), config, log: silentLogger, dir, pruneServices: o.pruneServices ?? false,
    ensureWatch: () => {},
    git: o.git && {
      location: o.git.url,
      intervalMs: 60_000,
      sync: () => syncGitCheckout({ url: o.git!.url, branch: o.git!.branch ?? 'main', path: o.git!.path ?? '', cloneDir }),
    },
  });
  const names = () => db.select().from(apps).all().map((a) => `${a.name}:${a.fallbackPort}:${a.owner}`).sort();
  const record = (source: string) => listSourceRecords(db).find((x) => x.source === source);
  return { db, r, dir, names, record };
}

describe('the watched directory source', () => {
  it('applies every file; a bad file changes nothing of its own and is reported, the others apply', async () => {
    const s = setup();
    mkdirSync(s.dir);
    writeFileSync(join(s.dir, 'a.yaml'), appYaml('mf-a', 8001));
    writeFileSync(join(s.dir, 'b.yml'), appYaml('mf-b', 8002));
    writeFileSync(join(s.dir, 'notes.txt'), 'not a manifest');
    expect(await s.r.reconcile('dir')).toEqual({});
    expect(s.names()).toEqual(['mf-a:8001:dir', 'mf-b:8002:dir']);

    // a half-written edit of b and a new valid file c
    writeFileSync(join(s.dir, 'b.yml'), appYaml('mf-b', 9002).slice(0, 60) + '\n  : [');
    writeFileSync(join(s.dir, 'c.yaml'), appYaml('mf-c', 8003));
    await s.r.reconcile('dir');
    expect(s.names()).toEqual(['mf-a:8001:dir', 'mf-b:8002:dir', 'mf-c:8003:dir']);
    const rec = s.record('dir')!;
    expect(rec.errors).toEqual([{ file: 'b.yml', document: 0, path: '', message: expect.stringContaining('invalid YAML') }]);
    expect(rec.resources).toEqual(expect.arrayContaining([{ kind: 'App', name: 'mf-b', file: 'b.yml' }]));

    // the same bad state again: still kept (not pruned), nothing else happens
    await s.r.reconcile('dir');
    expect(s.names()).toEqual(['mf-a:8001:dir', 'mf-b:8002:dir', 'mf-c:8003:dir']);

    // b fixed, a deleted: b updated, a pruned
    writeFileSync(join(s.dir, 'b.yml'), appYaml('mf-b', 9002));
    unlinkSync(join(s.dir, 'a.yaml'));
    await s.r.reconcile('dir');
    expect(s.names()).toEqual(['mf-b:9002:dir', 'mf-c:8003:dir']);
    expect(s.record('dir')!.errors).toEqual([]);
  });

  it('re-applying unchanged files writes nothing; a hand edit is set back as a drift event', async () => {
    const s = setup();
    mkdirSync(s.dir);
    writeFileSync(join(s.dir, 'a.yaml'), appYaml('mf-a', 8001));
    await s.r.reconcile('dir');
    const at = s.record('dir')!.applied_at;
    await s.r.reconcile('dir');
    expect(s.record('dir')!.applied_at).toBe(at);
    expect(s.db.select().from(appEvents).all()).toHaveLength(1);
    s.db.update(apps).set({ healthCheckPath: '/by-hand' }).run();
    await s.r.reconcile('dir');
    expect(s.db.select().from(apps).get()!.healthCheckPath).toBe('/');
    expect(s.db.select().from(appEvents).all().at(-1)).toMatchObject({ step: 'drift', level: 'warn' });
  });

  it('a missing directory applies nothing and prunes nothing; services are pruned only when configured', async () => {
    const s = setup({ pruneServices: true });
    expect(await s.r.reconcile('dir')).toEqual({});
    expect(s.record('dir')).toBeUndefined();
    mkdirSync(s.dir);
    writeFileSync(join(s.dir, 'x.yaml'), appYaml('mf-a', 8001) + '---\napiVersion: svc/v1\nkind: Service\nmetadata: {name: mf-cache}\nspec: {type: redis}\n');
    await s.r.reconcile('dir');
    rmSync(s.dir, { recursive: true });
    await s.r.reconcile('dir');
    expect(s.names()).toEqual(['mf-a:8001:dir']);
    expect((s.record('dir')!.errors as { message: string }[])[0].message).toContain('does not exist');
    mkdirSync(s.dir);
    await s.r.reconcile('dir');
    expect(s.names()).toEqual([]);
    expect(s.db.select().from(services).get()!.deletedAt).not.toBeNull();
  });
});

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, stdio: 'pipe' }).toString().trim();

describe('the git source', () => {
  function repo() {
    const bare = join(root, 'remote.git');
    const work = join(root, 'work');
    git(root, 'init', '--quiet', '--bare', '--initial-branch=main', bare);
    git(root, 'init', '--quiet', '--initial-branch=main', work);
    git(work, 'config', 'user.email', 't@example.com');
    git(work, 'config', 'user.name', 't');
    const commit = (files: Record<string, string>, msg: string) => {
      for (const [f, text] of Object.entries(files)) {
        mkdirSync(join(work, f, '..'), { recursive: true });
        writeFileSync(join(work, f), text);
      }
      git(work, 'add', '-A');
      git(work, 'commit', '--quiet', '-m', msg);
      return git(work, 'rev-parse', 'HEAD');
    };
    return { url: `file://${bare}`, work, commit, push: (force = false) => git(work, 'push', '--quiet', ...(force ? ['--force'] : []), bare, 'main') };
  }

  it('applies the branch head, records the commit, follows new commits and force-pushes, asks to be polled again', async () => {
    const g = repo();
    const c1 = g.commit({ 'deploy/a.yaml': appYaml('mf-a', 8001) }, 'one');
    g.push();
    const s = setup({ git: { url: g.url, path: 'deploy' } });
    expect(await s.r.reconcile('git')).toEqual({ requeueAfterMs: 60_000 });
    expect(s.names()).toEqual(['mf-a:8001:git']);
    expect(s.record('git')).toMatchObject({ revision: c1, errors: [] });

    const c2 = g.commit({ 'deploy/a.yaml': appYaml('mf-a', 8002), 'deploy/b.yaml': appYaml('mf-b', 8003) }, 'two');
    g.push();
    await s.r.reconcile('git');
    expect(s.names()).toEqual(['mf-a:8002:git', 'mf-b:8003:git']);
    expect(s.record('git')!.revision).toBe(c2);

    git(g.work, 'reset', '--quiet', '--hard', c1);
    const c3 = g.commit({ 'deploy/a.yaml': appYaml('mf-a', 8009) }, 'rewritten');
    g.push(true);
    await s.r.reconcile('git');
    expect(s.names()).toEqual(['mf-a:8009:git']);
    expect(s.record('git')!.revision).toBe(c3);
  });

  it('an unreachable remote keeps the last applied state and reports the error', async () => {
    const g = repo();
    const c1 = g.commit({ 'a.yaml': appYaml('mf-a', 8001) }, 'one');
    g.push();
    const s = setup({ git: { url: g.url } });
    await s.r.reconcile('git');
    rmSync(join(root, 'remote.git'), { recursive: true });
    expect(await s.r.reconcile('git')).toEqual({ requeueAfterMs: 60_000 });
    expect(s.names()).toEqual(['mf-a:8001:git']);
    expect(s.record('git')).toMatchObject({ revision: c1, errors: [{ document: -1, message: expect.stringContaining('git fetch failed') }] });
  });

  it('refuses option-like URLs and branch names before running git', async () => {
    await expect(syncGitCheckout({ url: '--upload-pack=touch /tmp/x', branch: 'main', path: '', cloneDir: join(root, 'c') })).rejects.toThrow(/must not start with -/);
    await expect(syncGitCheckout({ url: 'file:///x', branch: '-b', path: '', cloneDir: join(root, 'c') })).rejects.toThrow(/branch/);
    await expect(syncGitCheckout({ url: 'file:///x', branch: 'main', path: '../..', cloneDir: join(root, 'c') })).rejects.toThrow(/inside/);
  });
});
