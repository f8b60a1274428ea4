// The status sentence beside an app's status (dashboard, app page, `svc apps`): a failed deploy of an app
// that still serves never reads like an app with nothing running.
import { describe, expect, it } from 'vitest';
import { imageVersion, statusLine } from '../../../src/presenters/status-line.js';

const base = { status: 'active' as const, serving: true, live_image: 'ghcr.io/acme/web:v2', status_reason: null, route_error: null };

describe('status line', () => {
  it('says whether the app serves, which version, and why the last deploy failed', () => {
    expect(statusLine(base)).toBe('serving v2');
    expect(statusLine({ ...base, status: 'error', status_reason: 'health check "/" failed:\n  connection refused' })).toBe(
      'serving v2 · last deploy failed: health check "/" failed: connection refused',
    );
    expect(statusLine({ ...base, status: 'error', serving: false, live_image: null, status_reason: 'image not found' })).toBe('not serving · last deploy failed: image not found');
    expect(statusLine({ ...base, status: 'error', status_reason: null })).toBe('serving v2 · last deploy failed: no reason recorded');
    expect(statusLine({ ...base, status: 'inactive', serving: false, live_image: null })).toBe('not serving');
    expect(statusLine({ ...base, route_error: 'port 2024 is already in use' })).toBe('serving v2 · not routed: port 2024 is already in use');
  });

  it('names the version by tag, short digest, or the whole reference', () => {
    expect(imageVersion('ghcr.io/acme/web:v2')).toBe('v2');
    expect(imageVersion('localhost:5000/web')).toBe('localhost:5000/web');
    expect(imageVersion('web@sha256:0123456789abcdef0123')).toBe('0123456789ab');
    expect(imageVersion('svc-build/web:3f2a1b')).toBe('3f2a1b');
  });
});
