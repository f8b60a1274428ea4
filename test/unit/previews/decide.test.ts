// The pure parts of previews (issue 20): naming, which pull_request events create, update or remove, the
// TTL, the eviction order under `max`, the port pick, the settings' canonical form.
import { describe, expect, it } from 'vitest';
import { parsePortRange } from '../../../src/config.js';
import { envKeySchema } from '../../../src/desired/fields.js';
import { pullRequestPayload } from '../../../src/codehost/payloads.js';
import { githubPullRequest } from '../../../src/previews/github.js';
import { decidePullRequest, evictions, expired, type PreviewFacts } from '../../../src/previews/decide.js';
import { pickPort, previewDomain, previewName } from '../../../src/previews/naming.js';
import { previewSettingsSchema, settingsOf, settingsToStore } from '../../../src/previews/settings.js';

const SHA = 'a'.repeat(40);
const ON = settingsToStore(previewSettingsSchema.parse({ enabled: true }));
const app = (o: Partial<PreviewFacts> = {}): PreviewFacts => ({
  id: 1, name: 'web', appType: 'managed', buildMode: 'svc_build', repoUrl: 'https://github.com/acme/web.git', branch: 'main', imageRef: null, ciWorkflow: null, previews: ON, ...o,
});
const pr = (action: string, o: { head?: string | null; base?: string; repo?: string } = {}) =>
  githubPullRequest(pullRequestPayload.parse({
    action,
    number: 7,
    repository: { full_name: o.repo ?? 'acme/web' },
    pull_request: { merged: false, head: { sha: SHA.toUpperCase(), ref: 'feature/x', repo: o.head === null ? null : { full_name: o.head ?? 'acme/web' } }, base: { ref: o.base ?? 'main' } },
  }));

describe('decidePullRequest', () => {
  it.each(['opened', 'reopened', 'synchronize'])('%s of a same-repository head creates or updates the preview at the head commit', (action) => {
    const d = decidePullRequest(pr(action), [app()]);
    expect(d).toMatchObject({ kind: 'act', actions: [{ kind: 'upsert', parent: { name: 'web' }, pr: { number: 7, sha: SHA, headRef: 'feature/x', fork: false } }] });
  });

  it('closed (merged or not) removes, even with previews off or another base branch', () => {
    expect(decidePullRequest(pr('closed', { base: 'develop' }), [app({ previews: null })])).toMatchObject({ kind: 'act', actions: [{ kind: 'teardown', pr: 7 }] });
  });

  it.each([
    ['another action', pr('labeled'), [app()], /action labeled/],
    ['previews off', pr('opened'), [app({ previews: null })], /off/],
    ['another repository', pr('opened', { repo: 'acme/other' }), [app()], /no app for repository/],
    ['another base branch', pr('opened', { base: 'develop' }), [app()], /base branch develop/],
    ['a fork', pr('opened', { head: 'mallory/web' }), [app()], /fork mallory\/web/],
    ['a deleted fork', pr('opened', { head: null }), [app()], /fork \(deleted\)/],
    ['an external_ci app', pr('opened'), [app({ buildMode: 'external_ci' })], /external_ci/],
  ])('ignores %s', (_what, payload, apps, reason) => {
    const d = decidePullRequest(payload, apps);
    expect(d.kind).toBe('ignored');
    expect(d.kind === 'ignored' && d.reason).toMatch(reason);
  });

  it('a fork previews when the app allows forks, marked as a fork (no secrets)', () => {
    const forks = settingsToStore(previewSettingsSchema.parse({ enabled: true, forks: true }));
    expect(decidePullRequest(pr('opened', { head: 'mallory/web' }), [app({ previews: forks })])).toMatchObject({ kind: 'act', actions: [{ kind: 'upsert', pr: { fork: true } }] });
  });
});

describe('naming and addresses', () => {
  it('names <app>-pr-<n> within the 63-character rule', () => {
    expect(previewName('web', 12)).toBe('web-pr-12');
    expect(previewName('a'.repeat(58), 12)).toBeNull();
    expect(previewDomain('shop.example.com', 12)).toBe('pr-12.shop.example.com');
  });

  it('picks the lowest free port of the range, null when full', () => {
    expect(pickPort({ from: 20000, to: 20002 }, new Set([20000]))).toBe(20001);
    expect(pickPort({ from: 20000, to: 20001 }, new Set([20000, 20001]))).toBeNull();
    expect(parsePortRange('20000-20999')).toEqual({ from: 20000, to: 20999 });
    expect(parsePortRange(' 21000 ')).toEqual({ from: 21000, to: 21000 });
    expect(parsePortRange('30000-20000')).toBeUndefined();
    expect(parsePortRange(undefined)).toBeUndefined();
  });
});

describe('TTL and max', () => {
  it('expires a preview ttl_days after its last commit', () => {
    const now = new Date('2026-11-25T00:00:00Z');
    expect(expired('2026-11-18T00:00:01Z', 7, now)).toBe(false);
    expect(expired('2026-11-18T00:00:00Z', 7, now)).toBe(true);
  });

  it('evicts the previews with the oldest last commit to make room for one more', () => {
    const rows = [
      { prNumber: 3, lastCommitAt: '2026-11-20T00:00:00Z' },
      { prNumber: 1, lastCommitAt: '2026-11-22T00:00:00Z' },
      { prNumber: 2, lastCommitAt: '2026-11-19T00:00:00Z' },
    ];
    expect(evictions(rows, 5)).toEqual([]);
    expect(evictions(rows, 3).map((r) => r.prNumber)).toEqual([2]);
    expect(evictions(rows, 2).map((r) => r.prNumber)).toEqual([2, 3]);
  });
});

describe('settings', () => {
  it('fills defaults and stores one canonical string for equal settings', () => {
    expect(settingsOf(null)).toEqual({ enabled: false, max: 5, ttl_days: 7, env: {}, services: 'none', forks: false, resources: { memory_mb: 256, cpus: 0.5 } });
    const a = settingsToStore(previewSettingsSchema.parse({ env: { B: '2', A: '1' }, enabled: true }));
    const b = settingsToStore(previewSettingsSchema.parse({ enabled: true, env: { A: '1', B: '2' } }));
    expect(a).toBe(b);
    expect(settingsOf(a)).toMatchObject({ enabled: true, env: { A: '1', B: '2' } });
  });

  it('accepts the env keys the env command accepts', () => {
    for (const key of ['A', '_x', 'a1', '1A', 'A-B', 'x'.repeat(257)]) {
      expect(previewSettingsSchema.safeParse({ env: { [key]: 'v' } }).success).toBe(envKeySchema.safeParse(key).success);
    }
  });
});
