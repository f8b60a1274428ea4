// `svc templates [NAME] [--json]` (issue 32 section 3): a table of the catalog, one template's inputs and
// generated values, or the API's JSON as is.
import { describe, expect, it } from 'vitest';
import { templatesCommand } from '../../../src/cli/templates.js';
import { recordingClient } from './recording-client.js';

const plausible = {
  name: 'plausible',
  title: 'Plausible Analytics',
  description: 'Web analytics.',
  website: 'https://plausible.io',
  category: 'analytics',
  services: ['db', 'events', 'plausible'],
  inputs: [{ name: 'DOMAIN', title: 'Domain', kind: 'domain', required: true, default: null }, { name: 'TZ', title: 'Time zone', kind: 'text', required: true, default: 'UTC' }],
  generated: [{ name: 'SECRET_KEY_BASE', description: 'Signs sessions', alphabet: 'base64', length: 64, bytes: null }, { name: 'TOTP_VAULT_KEY', description: null, alphabet: 'base64', length: null, bytes: 32 }],
};

describe('svc templates', () => {
  it('lists the catalog as a table', async () => {
    const { client, calls } = recordingClient({ 'GET /api/templates': [plausible, { ...plausible, name: 'memos', title: 'Memos', category: 'docs', services: ['memos'] }] });
    let out = '';
    expect(await templatesCommand(client, {}, (s) => (out += s))).toBe(0);
    expect(out).toBe('NAME       TITLE                CATEGORY   SERVICES\nplausible  Plausible Analytics  analytics  db,events,plausible\nmemos      Memos                docs       memos\n');
    expect(calls).toEqual(['GET /api/templates']);
  });

  it('shows one template: what it asks and what it generates', async () => {
    const { client } = recordingClient({ 'GET /api/templates/plausible': plausible });
    let out = '';
    await templatesCommand(client, { name: 'plausible' }, (s) => (out += s));
    expect(out).toBe(
      [
        'Plausible Analytics (plausible, analytics)',
        'Web analytics.',
        'https://plausible.io',
        'services: db, events, plausible',
        'asks:',
        '  DOMAIN  Domain (domain, required)',
        '  TZ  Time zone (text, default UTC)',
        'generates:',
        '  SECRET_KEY_BASE  64 characters, base64 (Signs sessions)',
        '  TOTP_VAULT_KEY  32 random bytes, base64',
        '',
      ].join('\n'),
    );
  });

  it('prints the JSON as the API answered it', async () => {
    const { client } = recordingClient({ 'GET /api/templates': [plausible] });
    let out = '';
    await templatesCommand(client, { json: true }, (s) => (out += s));
    expect(JSON.parse(out)).toEqual([plausible]);
  });
});
