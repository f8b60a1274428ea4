// The banners that give way to the outcome (issue 18 section 2) and the `svc apps` table.
import { describe, expect, it } from 'vitest';
import { deployNotice, serviceNotice } from '../../../src/ui/outcome.js';
import { appsTable } from '../../../src/cli/apps.js';

describe('banners give way to the outcome', () => {
  const d = { id: 7, imageRef: 'ghcr.io/acme/web:v2', error: null };
  it('deploy and rollback: queued, running, then succeeded / failed / rolled back', () => {
    expect(deployNotice('deploy_queued', undefined)).toEqual({ text: 'Deploy queued. Its progress is shown below.', tone: 'ok' });
    expect(deployNotice('deploy_queued', { ...d, status: 'pending' })?.text).toBe('Deploy #7 is queued. Its progress is shown below.');
    expect(deployNotice('deploy_queued', { ...d, status: 'running' })?.text).toBe('Deploy #7 is running. Its progress is shown below.');
    expect(deployNotice('deploy_queued', { ...d, status: 'success' })).toEqual({ text: 'Deploy #7 succeeded: serving v2.', tone: 'ok' });
    expect(deployNotice('deploy_queued', { ...d, status: 'failed', error: 'health check / failed' })).toEqual({ text: 'Deploy #7 failed: health check / failed', tone: 'error' });
    expect(deployNotice('rollback_queued', { ...d, status: 'auto_rollback', error: 'crashed' })).toEqual({ text: 'Rollback #7 was rolled back automatically: crashed', tone: 'error' });
    expect(deployNotice('app_saved', { ...d, status: 'success' })).toBeUndefined();
  });

  it('service: provisioning, then running or why not', () => {
    expect(serviceNotice('service_created', { status: 'provisioning', error: null })).toEqual({ text: 'Service created. It is being provisioned.', tone: 'ok' });
    expect(serviceNotice('service_created', { status: 'active', error: null })).toEqual({ text: 'Service created and running.', tone: 'ok' });
    expect(serviceNotice('service_created', { status: 'error', error: 'pull of postgres:16 failed' })).toEqual({
      text: 'Service created, but it could not be provisioned: pull of postgres:16 failed', tone: 'error',
    });
    expect(serviceNotice('service_stopping', { status: 'active', error: null })).toBeUndefined();
  });
});

describe('svc apps', () => {
  it('says beside the status whether the app serves, which version, and why it is error', () => {
    const row = { image_ref: 'web:v2', access_url: 'http://box:8080', config_changed: false, replicas: 1, route_error: null };
    expect(appsTable([
      { ...row, name: 'web', status: 'error', serving: true, live_image: 'web:v2', status_reason: 'pull of web:v3 failed: not found' },
      { ...row, name: 'new', status: 'inactive', serving: false, live_image: null, status_reason: null, config_changed: true },
    ])).toBe(
      'NAME  STATUS     REPLICAS  IMAGE   URL              DETAIL\n' +
        'web   error      1         web:v2  http://box:8080  serving v2 · last deploy failed: pull of web:v3 failed: not found\n' +
        'new   inactive*  1         web:v2  http://box:8080  not serving\n' +
        '* env or links changed since the live deploy\n',
    );
  });
});
