// The app reconciler's memory of stopping `kill` events (kills.ts): pure, with a fake clock.
import { describe, it, expect } from 'vitest';
import { createKillNotes, KILL_NOTE_MS } from '../../../src/reconcilers/app/kills.js';

const kill = (name: string, signal?: string, labels: Record<string, string> = { 'svc.app': 'web' }) => ({ action: 'kill', id: 'x', name, labels, signal });

describe('kill notes', () => {
  it('a stopping signal marks the run it ends; a later start is a new run', () => {
    let now = 1_000_000;
    const k = createKillNotes(() => now);
    k.note(kill('web-1', '9'));
    expect(k.dying('web-1', now - 5_000)).toBe(true);
    expect(k.dying('web-1', now + 1)).toBe(false);
    expect(k.dying('web-2', now - 5_000)).toBe(false);
    now += KILL_NOTE_MS + 1;
    expect(k.dying('web-1', now - 60_000)).toBe(false);
  });

  it('keeps only stopping kills of app containers', () => {
    const now = 1_000_000;
    const k = createKillNotes(() => now);
    k.note(kill('web-1', '1')); // SIGHUP: a reload, not a stop
    k.note(kill('db-1', '9', { 'svc.service': 'db' }));
    k.note({ action: 'die', id: 'x', name: 'web-2', labels: { 'svc.app': 'web' } });
    k.note(kill('web-3', '15'));
    expect(k.dying('web-1', 0)).toBe(false);
    expect(k.dying('db-1', 0)).toBe(false);
    expect(k.dying('web-2', 0)).toBe(false);
    expect(k.dying('web-3', 0)).toBe(true);
  });

  it('hands each stopped container of an app to its next pass once (takeFresh)', () => {
    const k = createKillNotes(() => 1_000_000);
    k.note(kill('web-1', '9'));
    k.note(kill('web-1-r1', '15'));
    k.note(kill('api-1', '9', { 'svc.app': 'api' }));
    k.note(kill('web-2', '1')); // not a stop
    expect(k.takeFresh('web').sort()).toEqual(['web-1', 'web-1-r1']);
    expect(k.takeFresh('web')).toEqual([]);
    expect(k.takeFresh('api')).toEqual(['api-1']);
    expect(k.dying('web-1', 0)).toBe(true); // the run it ends still counts as dying
  });
});
